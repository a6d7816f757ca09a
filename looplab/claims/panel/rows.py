"""The claim check's rows: the claims, a row, its verdict and its sentence.

`views_claim` assembles the rows (its docstring says what each is).

A row is general (a live result, a re-timed corpus harness, a bound, a claim, and later
other kinds of evidence): label, kind, section, n, estimate, interval (with its name) or
none, verdict, sentence.

Verdicts, in plain words, compare a row's 95% CI with the claim's band of 40-60% shorter
(1.67-2.5x): `within the claim` (the CI inside it), `consistent with the claim`
(overlapping, estimate inside), `faster than claimed` / `slower than claimed` (the CI
wholly beyond / short of it), `undecided` (overlapping, estimate outside), `no data`. A row
of fewer than `MIN_PAIRED_N` paired units gets no CI and the verdict `too few runs`: no
verdict at all rather than one from a point.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

from looplab.claims.model import claim_entries
from looplab.claims.panel.click_views import ClickRow, click_json
from looplab.report.views.observations import ObservationRow, observation_json
from looplab.stats.intervals import MIN_PAIRED_N
from looplab.stats.order import against_band

__all__ = [
    "BAND_CLAIM",
    "CI_METHOD",
    "SECTIONS",
    "TOO_FEW",
    "Claim",
    "ClaimRow",
    "ClaimView",
    "amdahl",
    "band",
    "band_claim",
    "claim_json",
    "claims",
    "make_row",
    "required_share",
    "shorter",
    "verdict",
]


@dataclass(frozen=True)
class Claim:
    """A published claim: tasks `low`-`high` shorter (fractions of the slow time)."""

    key: str
    label: str
    low: float
    high: float
    source: str


BAND_CLAIM = "claim-40-60"
"""The claim entry whose band verdicts are measured against (its words are `_PHRASES`')."""


@functools.cache
def claims() -> tuple[Claim, ...]:
    """The published claims the panel tests: the shipped claim entries with a `panel`
    wording (`looplab.claims`, `entries/*.yaml`), in file-name order."""
    return tuple(
        Claim(name, e.panel.label, e.claimed.low, e.claimed.high, e.panel.source)
        for name, e in claim_entries().items()
        if e.panel is not None
    )


def band_claim() -> Claim:
    """The claim verdicts are measured against (`BAND_CLAIM`)."""
    return next(c for c in claims() if c.key == BAND_CLAIM)


CI_METHOD = "95% BCa CI"
"""The name of the data rows' interval (`report.stats.bca_speedup`; docs/design.md)."""
TOO_FEW = "too few runs"
"""The verdict of a row under `MIN_PAIRED_N` paired units: none."""
SECTIONS = {
    "yours": "Your runs",
    "reference": "Reference: the shipped corpus of public runs, re-timed (not your runs)",
    "bounds": "Bound and claims",
}
"""Section key -> its heading: the user's result apart from the reference rows."""


@dataclass
class ClaimRow:
    """One row of the claim check."""

    key: str
    kind: str
    """`live`, `live, virtual clock`, `re-timed` (the corpus, virtual), `bound`, `claim`."""
    label: str
    agent: str
    """What the row's runs are: agent kind and task kinds, from the data."""
    n: int
    """Paired units (tasks; a workload's draws; corpus runs); 0 for the claims."""
    speedup: float | None
    ci: tuple[float, float] | None
    """The interval, named by `interval` (a 95% CI, a p10-p90 range, a claimed band)."""
    verdict: str
    sentence: str
    section: str = "yours"
    """A key of `SECTIONS`."""
    interval: str = CI_METHOD
    """What `ci` is."""
    decode_share: float | None = None
    """Median share of task time in decode + hidden reasoning at the slow rate."""
    untimed: int = 0
    """Runs left out: no model or tool times to re-time."""

    @property
    def shorter(self) -> float | None:
        """1 - 1/speedup: how much less time the fast profile takes."""
        return None if self.speedup is None else shorter(self.speedup)

    @property
    def shorter_ci(self) -> tuple[float, float] | None:
        """The CI as percent shorter."""
        return None if self.ci is None else (shorter(self.ci[0]), shorter(self.ci[1]))


@dataclass
class ClaimView:
    """The claim check of one report."""

    slow: str
    fast: str
    slow_tps: float
    fast_tps: float
    rows: list[ClaimRow]
    corpus_detail: list[ClaimRow] = field(default_factory=list)
    """Per harness and model (the section's detail table)."""
    sentence: str = ""
    """The summary the headline shows."""
    click: list[ClickRow] = field(default_factory=list)
    """"Two minutes for a click?": time per action of the computer-use runs
    (`views_click`); empty without such runs."""
    observations: list[ObservationRow] = field(default_factory=list)
    """Their observation and prompt token sizes (`views_observations`)."""


def shorter(speedup: float) -> float:
    """1 - 1/speedup (NaN for a speedup that is not positive)."""
    return 1 - 1 / speedup if speedup > 0 else math.nan


def amdahl(share: float, ratio: float) -> float:
    """Task speedup when a share `share` of the time gets `ratio` times faster."""
    return 1 / ((1 - share) + share / ratio)


def required_share(shorter: float, ratio: float) -> float:
    """The decode share f that makes a `ratio`x faster decode shorten tasks by `shorter`."""
    return shorter / (1 - 1 / ratio)


def band(claim: Claim) -> tuple[float, float]:
    """A claim's band as speedups (40-60% shorter: 1.67-2.5x)."""
    return 1 / (1 - claim.low), 1 / (1 - claim.high)


def verdict(
    speedup: float | None, ci: tuple[float, float] | None, claim: Claim | None = None
) -> str:
    """`within the claim` / `consistent with the claim` / `faster than claimed` / `slower
    than claimed` / `undecided` / `no data` against a claim's band (the 40-60% one by
    default; module docstring). Without a CI (fewer than `MIN_PAIRED_N` units): `too few
    runs`, never a verdict from a point."""
    if speedup is None or not math.isfinite(speedup):
        return "no data"
    if ci is None:
        return TOO_FEW
    low_s, high_s = band(claim or band_claim())
    return _VERDICTS[against_band(ci[0], ci[1], speedup, low_s, high_s)]


_VERDICTS = {
    "below": "slower than claimed",
    "above": "faster than claimed",
    "inside": "within the claim",
    "consistent": "consistent with the claim",
    "undecided": "undecided",
}
"""`looplab.stats.order.against_band` in the claim panel's words (speedups)."""


_PHRASES = {
    "within the claim": "within the claim (40-60% shorter)",
    "consistent with the claim": "consistent with the claim, though its CI reaches outside 40-60%",
    "faster than claimed": "faster than claimed: more than 60% shorter",
    "slower than claimed": "slower than claimed: less than 40% shorter",
    "undecided": "undecided: its CI straddles the 40-60% band",
    "no data": "no data, so nothing about the claim",
    TOO_FEW: "no verdict",
}


def _sentence(row: ClaimRow) -> str:
    if row.speedup is None:
        return f"{row.label}: no timed runs: {_PHRASES['no data']} ({row.agent})."
    if row.ci:
        ci = (
            f" [{CI_METHOD} {row.ci[0]:.2f}-{row.ci[1]:.2f}x, "
            f"{shorter(row.ci[0]):.0%}-{shorter(row.ci[1]):.0%}]"
        )
    else:
        ci = f" (n={row.n}, under the {MIN_PAIRED_N} a 95% interval needs: no CI)"
    share = f", decode {row.decode_share:.0%} of the slow time" if row.decode_share else ""
    return (
        f"{row.label}: {row.speedup:.2f}x, {shorter(row.speedup):.0%} shorter{ci}{share}: "
        f"{_PHRASES[row.verdict]} ({row.agent})."
    )


def make_row(key: str, kind: str, label: str, agent: str, **values: Any) -> ClaimRow:
    """A data row (`ClaimRow`'s fields by name), its verdict and sentence computed; under
    `MIN_PAIRED_N` units its CI is dropped whatever was given (no CI, no verdict)."""
    row = ClaimRow(key, kind, label, agent, verdict="", sentence="", **values)
    if row.n < MIN_PAIRED_N:
        row.ci = None
    row.verdict = verdict(row.speedup, row.ci)
    row.sentence = _sentence(row)
    return row


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _row_json(row: ClaimRow) -> dict[str, Any]:
    ci = row.ci or (None, None)
    return {
        "key": row.key,
        "label": row.label,
        "kind": row.kind,
        "section": row.section,
        "interval": row.interval if row.ci else None,
        "agent": row.agent,
        "n": row.n,
        "untimed": row.untimed,
        "speedup": _finite(row.speedup),
        "ci_low": _finite(ci[0]),
        "ci_high": _finite(ci[1]),
        "shorter": _finite(row.shorter),
        "decode_share": _finite(row.decode_share),
        "verdict": row.verdict,
        "sentence": row.sentence,
    }


def claim_json(view: ClaimView) -> dict[str, Any]:
    """The claim check for scripts (`looplab report --format json`: key `claim`)."""
    return {
        "slow": view.slow,
        "fast": view.fast,
        "slow_tps": view.slow_tps,
        "fast_tps": view.fast_tps,
        "sentence": view.sentence,
        "rows": [_row_json(r) for r in view.rows],
        "corpus_detail": [_row_json(r) for r in view.corpus_detail],
        "click": [click_json(r) for r in view.click],
        "observations": [observation_json(r) for r in view.observations],
    }
