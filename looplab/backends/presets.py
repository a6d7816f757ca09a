"""Named latency presets, each with its source and the values that are assumptions.

`fast-750` and `slow-80` are the pair the lab exists to compare: identical in everything
but the decode rate, so a difference between them is the decode rate's doing. The other
presets model published systems (background.md); where a publication gives only the
decode rate, the rest are labelled assumptions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from looplab.backends.distributions import LogNormal, Uniform
from looplab.backends.profile import LatencyProfile
from looplab.config import apply_overrides, load_yaml_mapping, validate_model
from looplab.errors import ConfigError

__all__ = ["PRESETS", "preset_names", "resolve_profile"]

_SHARED_PAIR = {
    "ttft_s": 0.3,
    "prefill_tps": 10_000.0,
    "output_tokens": LogNormal(kind="lognormal", median=214, sigma=0.6),
}
_FLAT = (
    "serving model flat (assumed, idealised): decode does not slow with context or "
    "concurrent streams, prefill is linear in the prompt"
)
_PAIR_ASSUMPTIONS = [
    "ttft_s 0.3 s and prefill 10k tok/s are shared assumptions, equal in both of the pair",
    "output length log-normal, median 214 tokens (TraceLab median per step), sigma 0.6 assumed",
    _FLAT,
]

PRESETS: dict[str, LatencyProfile] = {
    profile.name: profile
    for profile in [
        LatencyProfile(
            name="fast-750",
            description="The mission's fast backend: 750 tok/s decode, otherwise equal to slow-80",
            source="decode rate: Sol on Cerebras, OpenAI announcement 2026-06-26 (via press)",
            assumptions=_PAIR_ASSUMPTIONS,
            decode_tps=750.0,
            **_SHARED_PAIR,
        ),
        LatencyProfile(
            name="slow-80",
            description="The mission's slow backend: 80 tok/s decode, otherwise equal to fast-750",
            source="decode rate: upper end of 65-80 tok/s GPU serving (OpenAI post 2026-04; "
            "Artificial Analysis)",
            assumptions=_PAIR_ASSUMPTIONS,
            decode_tps=80.0,
            **_SHARED_PAIR,
        ),
        LatencyProfile(
            name="sol-cerebras-750",
            description="GPT-5.6 'Sol' on Cerebras wafer-scale: 750 tok/s, ~85 pipeline stages",
            source="OpenAI announcement 2026-06-26 (via press): up to 750 tok/s, 1.05M context, "
            "128k max output; 70-100 wafers reported as a guess",
            assumptions=[
                "85 stages x 1.5 ms per stage (one layer per wafer; per-hop latency guessed)",
                "ttft_s 0.15 s, prefill 60k tok/s, decode jitter 3%",
                "hidden reasoning tokens log-normal, median 300, sigma 0.8",
                "flatter curve: weights and KV cache in on-chip SRAM, so decode slows only 5% "
                "per 100K context tokens and not at all with concurrent streams (assumed)",
                "capacity: 16 concurrent streams per system (the SRAM holding their KV; "
                "assumed), later requests queue; throughput ceiling 16 x 750 = 12,000 tok/s, "
                "so the rate stays flat up to capacity",
                "prefill +20% per 100K tokens of position (attention; assumed)",
            ],
            decode_tps=750.0,
            decode_context_slowdown=0.05,
            batch_slowdown=0.0,
            max_concurrency=16,
            server_max_tps=12_000.0,
            prefill_context_slowdown=0.2,
            decode_jitter=0.03,
            ttft_s=0.15,
            pipeline_stages=85,
            stage_latency_s=0.0015,
            prefill_tps=60_000.0,
            reasoning_tokens=LogNormal(kind="lognormal", median=300, sigma=0.8),
            output_tokens=LogNormal(kind="lognormal", median=214, sigma=0.6),
            context_window=1_050_000,
            max_output_tokens=128_000,
        ),
        LatencyProfile(
            name="gpu-frontier-68",
            description="A GPT-5-class frontier model on GPU serving: ~68 tok/s",
            source="OpenAI WebSockets post 2026-04; Artificial Analysis "
            "(GPT-5/5.2/5.5 ~65-68 tok/s)",
            assumptions=[
                "ttft_s 0.6 s plus exponential jitter (mean 0.2 s), prefill 8k tok/s",
                "decode jitter 10%; hidden reasoning tokens log-normal, median 300, sigma 0.8",
                _FLAT,
            ],
            decode_tps=68.0,
            decode_jitter=0.10,
            ttft_s=0.6,
            ttft_jitter_s={"kind": "exponential", "mean": 0.2},
            prefill_tps=8_000.0,
            reasoning_tokens=LogNormal(kind="lognormal", median=300, sigma=0.8),
            output_tokens=LogNormal(kind="lognormal", median=214, sigma=0.6),
        ),
        LatencyProfile(
            name="gpu-frontier-batched-68",
            description="A GPT-5-class model on GPU serving whose decode slows with context "
            "and with concurrent streams (continuous batching)",
            source="68 tok/s nominal: OpenAI WebSockets post 2026-04, Artificial Analysis; "
            "context slope fitted to TraceLab (uw-syfi/TraceLab, arXiv 2606.30560): median "
            "observed decode 40.7 tok/s at a median 119K-token cached prefix",
            assumptions=[
                "decode_tps 68 is the rate alone at a short context; the linear form "
                "a + b x context is assumed, its slope 0.56 per 100K tokens makes 68 tok/s "
                "fall to 40.7 tok/s at 119K tokens ((68 / 40.7 - 1) / 1.19)",
                "batch_slowdown 2% per additional stream and a 2,500 tok/s replica "
                "throughput ceiling assumed (no public per-provider figure)",
                "prefill 8k tok/s, +100% per 100K tokens of position (attention), assumed",
                "ttft_s 0.6 s plus exponential jitter (mean 0.2 s), as gpu-frontier-68",
                "hidden reasoning tokens log-normal, median 300, sigma 0.8, as gpu-frontier-68",
            ],
            decode_tps=68.0,
            decode_context_slowdown=0.56,
            batch_slowdown=0.02,
            server_max_tps=2_500.0,
            ttft_s=0.6,
            ttft_jitter_s={"kind": "exponential", "mean": 0.2},
            prefill_tps=8_000.0,
            prefill_context_slowdown=1.0,
            reasoning_tokens=LogNormal(kind="lognormal", median=300, sigma=0.8),
            output_tokens=LogNormal(kind="lognormal", median=214, sigma=0.6),
        ),
        LatencyProfile(
            name="codex-spark-1000",
            description="GPT-5.3-Codex-Spark on Cerebras: over 1,000 tok/s",
            source="OpenAI launch post 2026-02-12 (>1,000 tok/s; TTFT cut 50% by harness work)",
            assumptions=["ttft_s 0.15 s, prefill 60k tok/s, no hidden reasoning", _FLAT],
            decode_tps=1000.0,
            ttft_s=0.15,
            prefill_tps=60_000.0,
            output_tokens=LogNormal(kind="lognormal", median=214, sigma=0.6),
        ),
        LatencyProfile(
            name="kimi-k2.6-cerebras-981",
            description="Kimi K2.6 on Cerebras: 981 tok/s",
            source="Artificial Analysis 2026-05",
            assumptions=["ttft_s 0.2 s and prefill 60k tok/s assumed", _FLAT],
            decode_tps=981.0,
            ttft_s=0.2,
            prefill_tps=60_000.0,
        ),
        LatencyProfile(
            name="groq-gpt-oss-120b-500",
            description="gpt-oss-120b on Groq: ~500 tok/s",
            source="Groq model docs",
            assumptions=["ttft_s 0.2 s and prefill 40k tok/s assumed", _FLAT],
            decode_tps=500.0,
            ttft_s=0.2,
            prefill_tps=40_000.0,
        ),
        LatencyProfile(
            name="claude-sonnet-4.6-104",
            description="Claude Sonnet 4.6: 104 tok/s, TTFT 0.74 s",
            source="Artificial Analysis (2026-06)",
            assumptions=["prefill 10k tok/s assumed", _FLAT],
            decode_tps=104.0,
            ttft_s=0.74,
            prefill_tps=10_000.0,
        ),
        LatencyProfile(
            name="gpt-4o-131",
            description="GPT-4o: 131 tok/s, TTFT 0.45 s",
            source="Artificial Analysis (2026-06)",
            assumptions=["prefill 10k tok/s assumed", _FLAT],
            decode_tps=131.0,
            ttft_s=0.45,
            prefill_tps=10_000.0,
        ),
        LatencyProfile(
            name="gemini-3-flash-200",
            description="Gemini 3 Flash: 200 tok/s, TTFT 0.50 s",
            source="Artificial Analysis (2026-06)",
            assumptions=["prefill 20k tok/s assumed", _FLAT],
            decode_tps=200.0,
            ttft_s=0.50,
            prefill_tps=20_000.0,
        ),
        LatencyProfile(
            name="tracelab-observed-41",
            description="What real Claude Code / Codex sessions saw: 40.7 tok/s, TTFT 3.1 s",
            source="TraceLab (uw-syfi/TraceLab, arXiv 2606.30560): observed decode 40.7 tok/s, "
            "Codex TTFT median 3.1 s, 95.7% prefix-cache hits",
            assumptions=[
                "TTFT jitter uniform 0-1 s and prefill 10k tok/s assumed",
                "flat at the observed median: 40.7 tok/s already includes the context and "
                "load slowdowns of real serving (see gpu-frontier-batched-68 for the curve)",
            ],
            decode_tps=40.7,
            ttft_s=2.6,
            ttft_jitter_s=Uniform(kind="uniform", low=0.0, high=1.0),
            prefill_tps=10_000.0,
            output_tokens=LogNormal(kind="lognormal", median=214, sigma=0.6),
        ),
        LatencyProfile(
            name="swe-effi-gpt-4o-mini",
            description="SWE-Effi's slow-provider calibration: "
            "1.457 s + 4.27e-5 s/input token + 5e-3 s/output token",
            source="SWE-Effi (arXiv 2509.09853), GPT-4o-mini",
            assumptions=[
                "no prefix cache (the calibration charges every input token)",
                "linear in input and output, as fitted (no quadratic prefill term, no context "
                "or load slowdown: the calibration has none)",
            ],
            decode_tps=200.0,
            ttft_s=1.457,
            prefill_tps=1 / 4.27e-5,
            prefix_cache=False,
        ),
    ]
}


def preset_names() -> list[str]:
    """The preset names, sorted."""
    return sorted(PRESETS)


def resolve_profile(spec: str, overrides: Sequence[str] = ()) -> LatencyProfile:
    """Turn a preset name or a YAML file path, plus `key=value` overrides, into a profile.

    Args:
        spec: a preset name (`fast-750`) or a path to a YAML file holding a profile.
        overrides: `field=value` strings applied on top (e.g. `decode_tps=500`).

    Raises:
        ConfigError: unknown preset (listing the allowed names), unreadable file, or a
            field that fails validation (naming it).
    """
    base: dict[str, Any]
    source: str
    if spec in PRESETS:
        base = PRESETS[spec].model_dump(by_alias=True)
        source = f"profile preset '{spec}'"
        lines: dict[tuple[int | str, ...], int] = {}
    elif spec.endswith((".yaml", ".yml")) or Path(spec).is_file():
        base, lines = load_yaml_mapping(Path(spec))
        source = spec
    else:
        raise ConfigError(
            f"unknown latency profile {spec!r}",
            field="profile",
            allowed=preset_names(),
            given=str(spec),
        )
    data = apply_overrides(base, overrides)
    profile = validate_model(LatencyProfile, data, source=source, lines=lines)
    preset = PRESETS.get(spec)
    if preset is not None and profile.name == preset.name and _changed(profile, preset):
        # only a profile that differs from its preset is renamed: a seed is not a change
        profile = profile.model_copy(update={"name": f"{spec}+custom"})
    return profile


def _changed(profile: LatencyProfile, preset: LatencyProfile) -> bool:
    """Whether `profile` differs from `preset` in anything but its name and seed."""
    ignore = {"name", "seed"}
    return profile.model_dump(exclude=ignore) != preset.model_dump(exclude=ignore)
