"""`looplab claims check`: a claim's prediction, its CI, the verdict, the evidence.

The prediction is in the claim's own measure, from the evidence's paired units:

- `speedup`: median slow time / median fast time; `shorter`: 1 - 1/that; the interval is
  the BCa bootstrap over units (`report.stats.bca_speedup`, units resampled as clusters);
- `seconds`: the fast side's median time, its BCa interval (`bca_median`).

Under `MIN_PAIRED_N` units there is no interval and no verdict ("too few runs"). The
verdict compares the interval with the claimed band in the claim's measure, in the one
vocabulary of `looplab.claims.verdicts` (its docstring: `supported`, `consistent with the
claim`, `undecided`, `faster / slower than claimed`, `consistent with "up to"`, the bound's
two, `not testable yet: <why>`).

The break-even search (`test.break_even`, most of a check's time) is kept in the user's
cache once searched (`kept.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from looplab.claims.breakeven import (
    BreakEvenResult,
    break_even_text,
    find_break_even,
    result_from_json,
    result_json,
)
from looplab.claims.decompose import Decomposition, decompose, decomposition_json
from looplab.claims.evidence import WORKLOAD_GROUP, Evidence, gather, timed_evidence
from looplab.claims.groups import GroupRow, Pooled, group_rows, pooled_equal
from looplab.claims.kept import kept
from looplab.claims.knobs import Retimer
from looplab.claims.model import BreakEven, Claimed, ClaimEntry
from looplab.claims.verdicts import TOO_FEW, not_testable, verdict
from looplab.stats.intervals import MIN_PAIRED_N, bca_median, bca_speedup
from looplab.stats.order import median

__all__ = ["ClaimCheck", "check_claim", "check_json"]


@dataclass
class ClaimCheck:
    """One claim, checked."""

    entry: ClaimEntry
    evidence: Evidence
    prediction: float | None
    """The lab's number in the claim's measure (None: not testable)."""
    ci: tuple[float, float] | None
    """95% BCa interval in the same measure (None: too few runs, or not testable)."""
    verdict: str
    """A `looplab.claims.verdicts.Verdict`, or `not testable yet: <why>`."""
    decomposition: Decomposition | None = None
    groups: list[GroupRow] = field(default_factory=list)
    """Per group (harness) rows, when the evidence has two or more groups."""
    pooled: Pooled | None = None
    """The groups weighted equally (`groups.pooled_equal`)."""
    pooled_verdict: str | None = None
    """The verdict of the equal-weight pooled value."""
    break_even: BreakEvenResult | None = None
    """Where the assumed parameter of `test.break_even` flips the verdict."""


def _point(measure: str, slow: list[float], fast: list[float]) -> float:
    """The prediction in `measure` from the two sides' medians."""
    bottom = median(fast)
    if measure == "seconds":
        return bottom
    speedup = median(slow) / bottom if bottom > 0 else math.nan
    return speedup if measure == "speedup" else 1 - 1 / speedup


def _predict(
    claimed: Claimed, evidence: Evidence
) -> tuple[float | None, tuple[float, float] | None]:
    """(prediction, 95% interval or None) in the claim's measure."""
    if not evidence.units:
        return None, None
    slow = {u: [s] for u, s in zip(evidence.units, evidence.slow, strict=True)}
    fast = {u: [f] for u, f in zip(evidence.units, evidence.fast, strict=True)}
    if evidence.exact:  # arithmetic, not a sample: the interval is the point
        point = _point(claimed.measure, evidence.slow, evidence.fast)
        return point, (point, point)
    if claimed.measure == "seconds":
        return median(evidence.fast), bca_median(fast)
    bottom = median(evidence.fast)
    speedup = median(evidence.slow) / bottom if bottom > 0 else math.nan
    ci = bca_speedup(slow, fast)
    if claimed.measure == "speedup":
        return speedup, ci
    shorter = 1 - 1 / speedup
    return shorter, None if ci is None else (1 - 1 / ci[0], 1 - 1 / ci[1])


def check_claim(entry: ClaimEntry, *, break_even: bool = True) -> ClaimCheck:
    """Gather the entry's evidence, predict, judge and (when asked) decompose.

    `break_even=False` skips the break-even search (`test.break_even`: about a dozen
    re-timings of the evidence, most of a check's time, kept in the cache once searched)
    for a caller that shows no break-even.

    Raises:
        ConfigError: the entry's test cannot be run as written (names the field).
    """
    evidence = gather(entry)
    if evidence.reason is not None:
        return ClaimCheck(entry, evidence, None, None, not_testable(evidence.reason))
    prediction, ci = _predict(entry.claimed, _runs_only(evidence))
    judged = verdict(entry.claimed, prediction, ci, bound=evidence.bound)
    check = ClaimCheck(entry, evidence, prediction, ci, judged)
    if entry.test.decompose and evidence.retimer is not None and evidence.units:
        check.decomposition = decompose(evidence.retimer, entry.test.slow, entry.test.fast)
    _add_groups(check)
    spec = entry.test.break_even
    retimer = evidence.retimer
    if break_even and spec is not None and retimer is not None and evidence.units:
        check.break_even = _break_even(entry, spec, evidence, retimer)
    return check


def _break_even(
    entry: ClaimEntry, spec: BreakEven, evidence: Evidence, retimer: Retimer
) -> BreakEvenResult:
    """The break-even search of `entry` (`breakeven.py`), from the cache when kept there
    (`kept.py`)."""

    def judge(value: float) -> str:
        at = timed_evidence(entry, retimer, evidence.what, both={spec.knob: value})
        return verdict(entry.claimed, *_predict(entry.claimed, at), bound=evidence.bound)

    return kept(
        entry,
        "break-even",
        lambda: result_json(find_break_even(spec, judge)),
        lambda raw: result_from_json(spec, raw),
    )


def _runs_only(evidence: Evidence) -> Evidence:
    """The evidence without the units of workloads re-timed beside the corpus (their own
    rows only: the claim's own prediction stays the corpus runs')."""
    beside = {u for g, ids in evidence.groups.items() if g.startswith(WORKLOAD_GROUP) for u in ids}
    if not beside:
        return evidence
    keep = [i for i, u in enumerate(evidence.units) if u not in beside]
    return replace(
        evidence,
        units=[evidence.units[i] for i in keep],
        slow=[evidence.slow[i] for i in keep],
        fast=[evidence.fast[i] for i in keep],
    )


def _add_groups(check: ClaimCheck) -> None:
    """Per-group rows and the equal-weight pooled row over the harnesses (`groups.py`;
    a workload beside the corpus is a row, not pooled), when there are two or more."""
    ev, claimed = check.evidence, check.entry.claimed
    if len(ev.groups) < 2:
        return
    times = {u: (s, f) for u, s, f in zip(ev.units, ev.slow, ev.fast, strict=True)}
    pairs = {g: {u: times[u] for u in ids} for g, ids in ev.groups.items()}
    check.groups = group_rows(claimed, pairs)
    harnesses = {g: p for g, p in pairs.items() if not g.startswith(WORKLOAD_GROUP)}
    check.pooled = pooled_equal(claimed.measure, harnesses)
    if check.pooled is not None:
        pooled = check.pooled
        check.pooled_verdict = verdict(claimed, pooled.prediction, pooled.ci, bound=ev.bound)


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _implied_json(check: ClaimCheck) -> dict[str, Any] | None:
    implied = check.entry.test.implied
    if implied is None or check.evidence.retimer is None:
        return None
    return {
        "knob": implied.knob,
        "cut": implied.cut,
        "slow_value": _finite(check.evidence.implied),
        "searched_up_to": implied.up_to,
    }


def _no_interval(check: ClaimCheck) -> str | None:
    """Why a checked claim has no interval: too few runs (a prediction under `MIN_PAIRED_N`
    units), else None (no prediction: not testable or no evidence)."""
    return f"{TOO_FEW} for a CI" if check.prediction is not None and check.evidence.n else None


def check_json(check: ClaimCheck) -> dict[str, Any]:
    """One checked claim for scripts (`looplab claims check --json`)."""
    entry, ev = check.entry, check.evidence
    claimed = entry.claimed
    out: dict[str, Any] = {
        "name": entry.name,
        "title": entry.title,
        "source": entry.source.model_dump(mode="json"),
        "quote": entry.quote,
        "quote_kind": entry.quote_kind,
        "claimed": claimed.model_dump(mode="json"),
        "conditions": entry.conditions.model_dump(mode="json"),
        "method": entry.test.method,
        "evidence": ev.what,
        "n": ev.n,
        "untimed": ev.untimed,
        "prediction": _finite(check.prediction),
        "ci_low": _finite(check.ci[0]) if check.ci else None,
        "ci_high": _finite(check.ci[1]) if check.ci else None,
        "interval": "95% BCa CI" if check.ci else _no_interval(check),
        "min_n_for_ci": MIN_PAIRED_N,
        "verdict": check.verdict,
        "assumptions": entry.assumptions,
        "implied": _implied_json(check),
        "slow": entry.test.slow,
        "fast": {**entry.test.slow, **entry.test.fast},
    }
    out["groups"] = [
        {"group": g.group, "n": g.n, "prediction": _finite(g.prediction), "ci": g.ci}
        for g in check.groups
    ]
    pooled = check.pooled
    out["pooled_equal"] = (
        None
        if pooled is None
        else {
            "prediction": _finite(pooled.prediction),
            "ci": pooled.ci,
            "verdict": check.pooled_verdict,
            "how": pooled.how,
        }
    )
    out["break_even"] = None if check.break_even is None else break_even_text(check.break_even)
    if check.decomposition is not None:
        point = claimed.point if claimed.measure == "speedup" else None
        out["decomposition"] = decomposition_json(check.decomposition, point)
    return out
