"""The claim check's corpus rows: the shipped real runs re-timed at the two decode rates.

Each corpus trace (`looplab.traces.corpus`) is re-timed by `sweep_trace` at the slow and
the fast rate (model calls recomputed from their token counts with the slow group's
profile, or `slow-80`'s; tools and harness time as recorded). A run is timed when it has a
positive recorded task time and at least one call with token counts; others (SWE-agent's
demonstrations carry neither times nor tokens) are counted as untimed, never as 1.0x.
Rows: one per harness (the panel) and the harnesses pooled with equal weights (not by run
count, `claims.groups`), one per harness and model (the detail table); the
statistic is median slow time over median fast time, its CI the BCa bootstrap over runs
(none under `MIN_PAIRED_N` runs). They are reference rows (section "reference"), never the
user's result.

The rows depend on the package, the corpus, the two rates and the slow profile alone, so
they are kept in the user's cache (`looplab.cache.derived`, keyed by the package's digest,
the corpus's and a digest of the rates and profile): every report after the first reads
them (each field checked) instead of re-timing the corpus and bootstrapping (about 0.6 s of
CPU per report written).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from looplab.analysis.retime import sweep_trace
from looplab.cache import derived, stored_fields, stored_number
from looplab.claims.groups import pooled_equal
from looplab.errors import LooplabError
from looplab.latency.presets import resolve_profile
from looplab.latency.profile import LatencyProfile
from looplab.latency.spec import recorded_profile
from looplab.report.claims.rows import ClaimRow, make_row
from looplab.stats.intervals import bca_speedup, median
from looplab.traces.corpus import CorpusRun, corpus_dir, list_corpus, load_corpus
from looplab.traces.io import Trace

__all__ = ["corpus_rows", "corpus_traces"]


@functools.cache
def corpus_traces() -> tuple[tuple[CorpusRun, Trace], ...]:
    """The shipped corpus, read once per process (empty when it is not shipped)."""
    try:
        runs = list_corpus()
        return tuple(zip(runs, load_corpus(runs), strict=True))
    except LooplabError:
        return ()


def _profile(spec: Mapping[str, object] | None) -> LatencyProfile:
    recorded = recorded_profile(spec)
    return recorded if recorded is not None else resolve_profile("slow-80", [])


def _timed(
    slow_tps: float, fast_tps: float, base: LatencyProfile
) -> dict[tuple[str, str], list[tuple[str, float, float, float]]]:
    """(harness, model) -> [(run id, slow s, fast s, decode share at slow)], untimed runs
    as NaN times."""
    out: dict[tuple[str, str], list[tuple[str, float, float, float]]] = defaultdict(list)
    nan = float("nan")
    for run, trace in corpus_traces():
        calls = trace.model_calls()
        key = (run.harness, run.model or "unknown")
        points = sweep_trace(trace, [slow_tps, fast_tps], [base.ttft_s], base)
        slow, fast = points[0], points[-1]
        if slow.task_s <= 0 or fast.task_s <= 0 or slow.kept_calls >= len(calls):
            out[key].append((run.run_id, nan, nan, nan))
            continue
        share = slow.rate_scaled_s / slow.task_s
        out[key].append((run.run_id, slow.task_s, fast.task_s, share))
    return out


def _row(key: str, label: str, agent: str, runs: list[tuple[str, float, float, float]]) -> ClaimRow:
    timed = [r for r in runs if r[1] == r[1]]
    slow = {run_id: [s] for run_id, s, _, _ in timed}
    fast = {run_id: [f] for run_id, _, f, _ in timed}
    speedup = None
    if timed:
        speedup = median([s for _, s, _, _ in timed]) / median([f for _, _, f, _ in timed])
    return make_row(
        key,
        "re-timed",
        label,
        agent,
        n=len(timed),
        speedup=speedup,
        ci=bca_speedup(slow, fast) if timed else None,
        decode_share=median([d for *_, d in timed]) if timed else None,
        untimed=len(runs) - len(timed),
        section="reference",
    )


def corpus_rows(
    slow_tps: float, fast_tps: float, spec: Mapping[str, object] | None
) -> tuple[list[ClaimRow], list[ClaimRow], list[float]]:
    """(rows per harness, rows per harness and model, every timed run's decode share);
    from the user's cache when this package, corpus, rates and profile made them before."""
    base = _profile(spec)
    asked = json.dumps([slow_tps, fast_tps, base.model_dump(mode="json")], sort_keys=True)
    name = f"corpus-rows-{hashlib.sha256(asked.encode()).hexdigest()[:16]}"
    return derived(
        name,
        lambda: _stored(*_compute_rows(slow_tps, fast_tps, base)),
        _loaded,
        inputs=(corpus_dir(),),
    )


def _stored(rows: list[ClaimRow], detail: list[ClaimRow], shares: list[float]) -> dict[str, Any]:
    """The rows as JSON (`_loaded` reads them back)."""
    return {
        "rows": [dataclasses.asdict(r) for r in rows],
        "detail": [dataclasses.asdict(r) for r in detail],
        "shares": shares,
    }


def _loaded(stored: Any) -> tuple[list[ClaimRow], list[ClaimRow], list[float]]:
    """Stored rows back as `ClaimRow`s, every field checked (a cache file is outside input).

    Raises:
        TypeError: a part missing or extra, or a field of another type.
    """
    if not isinstance(stored, dict) or set(stored) != {"rows", "detail", "shares"}:
        raise TypeError("corpus rows: expected an object of rows, detail and shares")
    if not isinstance(stored["shares"], list):
        raise TypeError("corpus rows: shares must be a list")
    shares = [stored_number(v, "corpus rows: shares") for v in stored["shares"]]
    return (
        [_row_of(r) for r in _list(stored["rows"])],
        [_row_of(r) for r in _list(stored["detail"])],
        shares,
    )


_ROW_TYPES: dict[str, tuple[type, ...]] = {
    "key": (str,),
    "kind": (str,),
    "label": (str,),
    "agent": (str,),
    "n": (int,),
    "speedup": (int, float, type(None)),
    "ci": (list, tuple, type(None)),  # a list once stored as JSON
    "verdict": (str,),
    "sentence": (str,),
    "section": (str,),
    "interval": (str,),
    "decode_share": (int, float, type(None)),
    "untimed": (int,),
}
"""`ClaimRow`'s fields and the JSON types each may hold."""


def _row_of(raw: Any) -> ClaimRow:
    stored_fields(raw, ClaimRow, "corpus row")
    for name, kinds in _ROW_TYPES.items():
        if isinstance(raw[name], bool) or not isinstance(raw[name], kinds):
            raise TypeError(f"corpus row: {name} is {raw[name]!r}")
    ci = raw["ci"]
    if ci is not None:
        if len(ci) != 2:
            raise TypeError(f"corpus row: ci is {ci!r}")
        ci = (stored_number(ci[0], "corpus row: ci"), stored_number(ci[1], "corpus row: ci"))
    return ClaimRow(**{**raw, "ci": ci})


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"corpus rows: expected a list, got {type(value).__name__}")
    return value


def _compute_rows(
    slow_tps: float, fast_tps: float, base: LatencyProfile
) -> tuple[list[ClaimRow], list[ClaimRow], list[float]]:
    """`corpus_rows` computed: the corpus re-timed at the two rates and bootstrapped."""
    timed = _timed(slow_tps, fast_tps, base)
    by_harness: dict[str, list[tuple[str, float, float, float]]] = defaultdict(list)
    models: dict[str, list[str]] = defaultdict(list)
    detail: list[ClaimRow] = []
    for (harness, model), runs in sorted(timed.items()):
        by_harness[harness] += runs
        models[harness].append(model)
        detail.append(
            _row(
                f"corpus:{harness}:{model}", f"{harness} · {model}", f"{harness} with {model}", runs
            )
        )
    rows = [
        _row(
            f"corpus:{harness}",
            f"corpus {harness}",
            f"{harness} runs ({', '.join(models[harness])})",
            runs,
        )
        for harness, runs in sorted(by_harness.items(), key=lambda kv: -len(kv[1]))
    ]
    pooled = _equal_weight(by_harness)
    if pooled is not None:
        rows.append(pooled)
    shares = [d for runs in by_harness.values() for *_, d in runs if d == d]
    return rows, detail, shares


def _equal_weight(
    by_harness: Mapping[str, list[tuple[str, float, float, float]]],
) -> ClaimRow | None:
    """The harnesses pooled with equal weights, not by run count (`claims.groups`)."""
    groups = {
        harness: {run_id: (s, f) for run_id, s, f, _ in runs if s == s}
        for harness, runs in by_harness.items()
    }
    groups = {h: pairs for h, pairs in groups.items() if pairs}
    pooled = pooled_equal("speedup", groups)
    if pooled is None:
        return None
    row = make_row(
        "corpus:equal-weight",
        "re-timed",
        f"corpus, {pooled.groups} harnesses weighted equally",
        pooled.how,
        n=sum(len(p) for p in groups.values()),
        speedup=pooled.prediction,
        ci=pooled.ci,
        section="reference",
    )
    row.interval = "95% stratified bootstrap CI"
    return row
