"""Latency profiles: presets, overrides, files, and the errors people see."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from looplab.distributions import LogNormal
from looplab.errors import ConfigError
from looplab.latency.presets import presets, resolve_profile
from looplab.latency.profile import LatencyProfile
from looplab.latency.timing import TimingModel


def test_mission_pair_differs_only_in_decode_rate() -> None:
    """fast-750 and slow-80 are equal in every field but name, description, source, decode
    and price (the fast tier is sold at another price entry)."""
    fast = presets()["fast-750"].model_dump()
    slow = presets()["slow-80"].model_dump()
    differing = {key for key in fast if fast[key] != slow[key]}
    assert differing == {"name", "description", "source", "decode_tps", "price"}
    assert (fast["decode_tps"], slow["decode_tps"]) == (750, 80)


def test_every_preset_cites_a_source_and_assumptions() -> None:
    """Every preset names its source and states which values are assumptions."""
    required = {"fast-750", "slow-80", "sol-cerebras-750", "gpu-frontier-68", "codex-spark-1000"}
    assert required <= set(presets())
    for preset in presets().values():
        assert preset.source, preset.name
        assert preset.assumptions, preset.name


def test_pipeline_stages_add_to_ttft_only() -> None:
    """Pipeline stages x stage latency add to the fixed TTFT and leave decode untouched."""
    sol = presets()["sol-cerebras-750"]
    assert TimingModel.from_profile(sol).fixed_ttft_s == pytest.approx(sol.ttft_s + 85 * 0.0015)
    assert sol.decode_tps == 750


def test_unknown_preset_lists_allowed_names() -> None:
    """An unknown profile name is a ConfigError listing every preset."""
    with pytest.raises(ConfigError) as caught:
        resolve_profile("fast-9000")
    assert caught.value.field == "profile"
    assert "fast-750" in str(caught.value) and "slow-80" in str(caught.value)


def test_override_errors_name_the_field() -> None:
    """A bad override names the field, the value and the constraint."""
    with pytest.raises(ConfigError) as caught:
        resolve_profile("slow-80", ["decode_tps=-3"])
    assert caught.value.field == "decode_tps"
    assert "-3" in str(caught.value)
    with pytest.raises(ConfigError) as typo:
        resolve_profile("slow-80", ["decode_tsp=3"])
    assert "decode_tps" in typo.value.allowed


def test_profile_file_with_distribution_and_line_numbers(tmp_path: Path) -> None:
    """A YAML profile loads with distributions; an error names the file and line."""
    good = tmp_path / "p.yaml"
    good.write_text(
        "decode_tps: 300\nreasoning_tokens: {kind: lognormal, median: 200, sigma: 0.5}\n"
    )
    profile = resolve_profile(str(good), ["ttft_s=0.2"])
    assert isinstance(profile.reasoning_tokens, LogNormal)
    assert profile.ttft_s == 0.2
    bad = tmp_path / "bad.yaml"
    bad.write_text("decode_tps: 300\nttft_jitter_s:\n  kind: gaussian\n  mean: 1\n")
    with pytest.raises(ConfigError) as caught:
        resolve_profile(str(bad))
    message = str(caught.value)
    assert str(bad) in message and "line 2" in message
    assert "'lognormal'" in message  # the allowed kinds are listed


def test_distributions_are_seeded() -> None:
    """The same seed gives the same draws."""
    dist = LogNormal(kind="lognormal", median=200, sigma=0.6)
    first = [dist.sample(random.Random(7)) for _ in range(3)]
    again = [dist.sample(random.Random(7)) for _ in range(3)]
    assert first == again


def test_limits_must_fit() -> None:
    """max_output_tokens above the context window is refused."""
    with pytest.raises(ValueError, match="exceeds context_window"):
        LatencyProfile(decode_tps=10, context_window=100, max_output_tokens=200)


def test_presets_are_data_files_with_their_sources() -> None:
    """Every preset is a YAML file named after it, with a source, loaded by the profile
    loader (so `--profile path/to/that.yaml` gives the same profile)."""
    from looplab.latency.presets import PRESET_DIR

    files = sorted(PRESET_DIR.glob("*.yaml"))
    assert [f.stem for f in files] == sorted(presets())
    for path in files:
        assert presets()[path.stem].source
        from_file = resolve_profile(str(path))
        assert from_file.model_dump() == presets()[path.stem].model_dump()


def test_typed_values_apply_without_a_string_round_trip() -> None:
    """`resolve_profile(values=...)` sets typed values as they are (a number, a mapping for
    a distribution, a seed) after the command line's strings, which it does not re-parse."""
    profile = resolve_profile(
        "fast-750",
        ["decode_tps=600"],
        values={
            "decode_tps": 500.5,
            "output_tokens": {"kind": "lognormal", "median": 90, "sigma": 0.5},
            "seed": 7,
        },
    )
    assert profile.decode_tps == 500.5 and profile.seed == 7
    assert profile.output_tokens == LogNormal(kind="lognormal", median=90, sigma=0.5)
    assert profile.name == "fast-750+custom"
    with pytest.raises(ConfigError, match="decode_tps"):
        resolve_profile("fast-750", values={"decode_tps": "fast"})


def test_a_bare_preset_is_a_copy_of_the_loaded_one() -> None:
    """Without overrides or values a preset is returned as loaded (equal to what the dump
    and validation round trip gave), as a deep copy: changing it leaves the preset alone."""
    for name, preset in presets().items():
        profile = resolve_profile(name, [], values={})
        assert profile == preset and profile is not preset
        assert profile == LatencyProfile.model_validate(preset.model_dump(by_alias=True))
        profile.faults.seed += 1
        assert presets()[name].faults.seed != profile.faults.seed
    assert resolve_profile("fast-750", values={"seed": 3}).seed == 3
