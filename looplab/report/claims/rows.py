"""The claim check's rows: the claims, a row, its verdict and its sentence.

`views_claim` assembles the rows (its docstring says what each is).

A row is general (a live result, a re-timed corpus harness, a bound, a claim, and later
other kinds of evidence): label, kind, section, n, estimate, interval (with its name) or
none, verdict, sentence.

Verdicts compare a row's 95% CI, as percent shorter, with the band of the claim entry
`BAND_CLAIM` (40-60% shorter: 1.67-2.5x) in the one vocabulary of
`looplab.claims.verdicts` (`supported`, `consistent with the claim`, `faster than claimed`,
`slower than claimed`, `undecided`, `no data`); a row of fewer than `MIN_PAIRED_N` paired
units gets no CI and the verdict `too few runs`: no verdict at all rather than one from a
point.

The claims are the shipped claim entries (`looplab.claims.model.ClaimEntry`) with a
`panel` wording, not a copy of them: `panel_claims`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

from looplab.claims.model import ClaimEntry, PanelText, claim_entries
from looplab.claims.verdicts import Verdict, phrase, verdict
from looplab.report.claims.click_views import ClickRow, click_json
from looplab.report.views.observations import ObservationRow, observation_json
from looplab.stats.intervals import MIN_PAIRED_N

__all__ = [
    "BAND_CLAIM",
    "CI_METHOD",
    "SECTIONS",
    "ClaimRow",
    "ClaimView",
    "amdahl",
    "band_claim",
    "claim_json",
    "make_row",
    "panel_claims",
    "panel_text",
    "required_share",
    "row_verdict",
    "shorter",
    "speedup_band",
]


BAND_CLAIM = "claim-40-60"
"""The claim entry whose band the rows' verdicts are measured against."""


@functools.cache
def panel_claims() -> tuple[ClaimEntry, ...]:
    """The published claims the panel tests: the shipped claim entries with a `panel`
    wording (`looplab.claims`, `entries/*.yaml`; all `shorter` claims), in file-name order."""
    return tuple(e for e in claim_entries().values() if e.panel is not None)


def panel_text(claim: ClaimEntry) -> PanelText:
    """A panel claim's wording (label and source as the panel quotes them).

    Raises:
        ValueError: the entry has no `panel` wording (it is not one of `panel_claims`).
    """
    if claim.panel is None:
        raise ValueError(f"claim entry {claim.name!r} has no panel wording")
    return claim.panel


def band_claim() -> ClaimEntry:
    """The claim verdicts are measured against (`BAND_CLAIM`)."""
    return next(c for c in panel_claims() if c.name == BAND_CLAIM)


CI_METHOD = "95% BCa CI"
"""The name of the data rows' interval (`report.stats.bca_speedup`; docs/design.md)."""
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


def speedup_band(claim: ClaimEntry) -> tuple[float, float]:
    """A panel claim's band as speedups (40-60% shorter: 1.67-2.5x)."""
    return 1 / (1 - claim.claimed.low), 1 / (1 - claim.claimed.high)


def _sentence(row: ClaimRow, said: Verdict) -> str:
    if row.speedup is None:
        return f"{row.label}: no timed runs: {phrase(said, band_claim().claimed)} ({row.agent})."
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
        f"{phrase(said, band_claim().claimed)} ({row.agent})."
    )


def row_verdict(row: ClaimRow, claim: ClaimEntry | None = None) -> Verdict:
    """A data row's verdict against a panel claim (`BAND_CLAIM` by default): its speedup and
    CI read as percent shorter, judged by `looplab.claims.verdicts.verdict`."""
    return verdict((claim or band_claim()).claimed, row.shorter, row.shorter_ci)


def make_row(key: str, kind: str, label: str, agent: str, **values: Any) -> ClaimRow:
    """A data row (`ClaimRow`'s fields by name), its verdict and sentence computed; under
    `MIN_PAIRED_N` units its CI is dropped whatever was given (no CI, no verdict)."""
    row = ClaimRow(key, kind, label, agent, verdict="", sentence="", **values)
    if row.n < MIN_PAIRED_N:
        row.ci = None
    said = row_verdict(row)
    row.verdict, row.sentence = said, _sentence(row, said)
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
