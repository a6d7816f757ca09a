"""One verdict vocabulary for every published claim the lab checks: the words, their
phrases, and the rules that pick them.

Every place that judges a claim says it with `Verdict` (a `StrEnum`: each member is its
own word, so it compares equal to the string and prints, and dumps to JSON, as it):

- `looplab claims check` (`check.py`, `render.py`): an entry's prediction in the claim's
  own measure (`shorter`, `speedup`, `seconds`), against its band (a point claim is a band
  of one value; an "up to" claim; a best case from a bound);
- the report's claim panel (`report/claims/rows.py`, `report/claims/views.py`): each
  row's speedup, read as percent shorter, against the claim entries with a `panel`
  wording (the same rule, the same words);
- "Two minutes for a click?" (`report/claims/click_views.py`): the press line's two-minute wait
  per action at the slow and the fast rate (`wait_verdict`).

The rule of `verdict` (a larger gain, i.e. faster, is more; `seconds` count negatively):

- `no data`: no finite estimate; `too few runs` (`TOO_FEW`): no 95% interval, which every
  interval function gives only from `MIN_PAIRED_N` units on: no verdict from a point;
- `supported`: the interval lies inside the band (for a point claim: holds the point);
- `consistent with the claim`: it straddles a band edge, the estimate inside the band;
- `undecided`: it straddles a band edge, the estimate outside;
- `faster than claimed` / `slower than claimed`: the whole interval beyond / short of it;
- an "up to" claim: `consistent with "up to"` while the interval reaches no further than
  the claimed best case (its lower end at most the band's top), else `faster than claimed`;
- a bound (the lab's best case, e.g. perfect speculation, can only rule a claim out):
  `slower than claimed, even at the bound` when the interval is wholly short of the band,
  else `within the bound`;
- `not testable yet: <why>` (`not_testable`): the lab has no way to compute it.

`phrase` gives each verdict its one clause for sentences that quote the band.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Final

from looplab.claims.model import Claimed
from looplab.stats.intervals import MIN_PAIRED_N
from looplab.stats.order import against_band

__all__ = [
    "TOO_FEW",
    "Verdict",
    "band_text",
    "not_testable",
    "phrase",
    "value_text",
    "verdict",
    "wait_verdict",
]


class Verdict(StrEnum):
    """Every verdict word of a claim check (module docstring: when each is given)."""

    SUPPORTED = "supported"
    CONSISTENT = "consistent with the claim"
    UNDECIDED = "undecided"
    FASTER = "faster than claimed"
    SLOWER = "slower than claimed"
    UP_TO = 'consistent with "up to"'
    SLOWER_AT_BOUND = "slower than claimed, even at the bound"
    WITHIN_BOUND = "within the bound (the lab's best case allows it)"
    NOT_TESTABLE = "not testable yet"
    TOO_FEW = "too few runs"
    NO_DATA = "no data"
    # "Two minutes for a click?" (`wait_verdict`)
    NO_WAIT = "no two-minute wait"
    WAIT_REMOVED = "wait removed"
    STILL_MINUTES = "still minutes"


TOO_FEW: Final = Verdict.TOO_FEW
"""The verdict (and interval note: "too few runs for a CI") under `MIN_PAIRED_N` units."""

_AGAINST_BAND = {
    "below": Verdict.SLOWER,
    "above": Verdict.FASTER,
    "inside": Verdict.SUPPORTED,
    "consistent": Verdict.CONSISTENT,
    "undecided": Verdict.UNDECIDED,
}
"""`looplab.stats.order.against_band` (on the gain axis) in the vocabulary's words."""


def _gain(claimed: Claimed, value: float) -> float:
    """A value of the claim's measure as a gain (bigger is faster): seconds count negatively."""
    return -value if claimed.measure == "seconds" else value


def verdict(
    claimed: Claimed,
    point: float | None,
    ci: tuple[float, float] | None,
    *,
    bound: bool = False,
) -> Verdict:
    """The verdict (module docstring) of an estimate `point` and its 95% interval `ci`, both
    in `claimed`'s measure, against its band; with `bound`, `point` is a best case and can
    only rule the claim out. `ci` None (under `MIN_PAIRED_N` units): `too few runs`."""
    if point is None or not math.isfinite(point):
        return Verdict.NO_DATA
    if ci is None:
        return Verdict.TOO_FEW
    lo, hi = sorted((_gain(claimed, ci[0]), _gain(claimed, ci[1])))
    band_lo, band_hi = sorted((_gain(claimed, claimed.low), _gain(claimed, claimed.high)))
    if bound:
        return Verdict.SLOWER_AT_BOUND if hi < band_lo else Verdict.WITHIN_BOUND
    if claimed.up_to:
        return Verdict.UP_TO if lo <= band_hi else Verdict.FASTER
    return _AGAINST_BAND[against_band(lo, hi, _gain(claimed, point), band_lo, band_hi)]


def not_testable(reason: str) -> str:
    """The verdict of a claim the lab cannot compute: `not testable yet: <reason>`."""
    return f"{Verdict.NOT_TESTABLE}: {reason}"


def wait_verdict(
    n: int,
    medians: tuple[float | None, float | None],
    slow: tuple[float, float] | None,
    fast: tuple[float, float] | None,
    wait_s: float,
) -> Verdict:
    """The press line's wait per action (`wait_s`, "two minutes") against the slow and the
    fast side's median (`medians`, slow first) and 95% intervals over `n` units: `no data`
    (a side without an estimate), `too few runs` (under `MIN_PAIRED_N` units or without
    both intervals), `still minutes` (the fast interval wholly over it), `no two-minute
    wait` (the slow interval wholly under it), `wait removed` (slow wholly over, fast wholly
    under), else `undecided`."""
    if medians[0] is None or medians[1] is None:
        return Verdict.NO_DATA
    if n < MIN_PAIRED_N or slow is None or fast is None:
        return Verdict.TOO_FEW
    if fast[0] >= wait_s:
        return Verdict.STILL_MINUTES
    if slow[1] < wait_s:
        return Verdict.NO_WAIT
    if slow[0] >= wait_s and fast[1] < wait_s:
        return Verdict.WAIT_REMOVED
    return Verdict.UNDECIDED


def value_text(claimed: Claimed, value: float, *, exact: bool = False) -> str:
    """A number in the claim's measure (`62%`, `5.96x`, `103.0 s`); `exact` keeps a tenth
    of a percent (a claimed 48.5%)."""
    if claimed.measure == "shorter":
        return f"{value:.1%}" if exact and round(value * 1000) % 10 else f"{value:.0%}"
    if claimed.measure == "speedup":
        return f"{value:.2f}x"
    return f"{value:.1f} s"


def band_text(claimed: Claimed) -> str:
    """The claimed band in its measure: `40-60%`, `54%`, `up to 2.50x`."""
    lo = value_text(claimed, claimed.low, exact=True)
    hi = value_text(claimed, claimed.high, exact=True)
    if claimed.up_to:
        return f"up to {hi}"
    if lo == hi:
        return lo
    return f"{lo.removesuffix('%')}-{hi}" if claimed.measure == "shorter" else f"{lo}-{hi}"


_BEYOND = {
    "shorter": ("more than {high} shorter", "less than {low} shorter"),
    "speedup": ("more than {high}", "less than {low}"),
    "seconds": ("under {low}", "over {high}"),
}
"""Measure -> (faster than the band, slower than it), in the measure's own direction."""


def phrase(said: Verdict, claimed: Claimed) -> str:
    """The verdict as the clause a sentence ends with, quoting `claimed`'s band
    (`slower than claimed: less than 40% shorter`)."""
    band = band_text(claimed)
    ends = {
        "low": value_text(claimed, claimed.low, exact=True),
        "high": value_text(claimed, claimed.high, exact=True),
    }
    faster, slower = (text.format(**ends) for text in _BEYOND[claimed.measure])
    unit = " shorter" if claimed.measure == "shorter" else ""
    clauses = {
        Verdict.SUPPORTED: f"supported: its CI inside the claim ({band}{unit})",
        Verdict.CONSISTENT: f"consistent with the claim, though its CI reaches outside {band}",
        Verdict.UNDECIDED: f"undecided: its CI straddles the {band} band",
        Verdict.FASTER: f"faster than claimed: {faster}",
        Verdict.SLOWER: f"slower than claimed: {slower}",
        Verdict.UP_TO: f'consistent with "up to": its CI reaches no further than {ends["high"]}',
        Verdict.SLOWER_AT_BOUND: f"slower than claimed, even at the bound: {slower}",
        Verdict.WITHIN_BOUND: f"within the bound: its best case allows {band}{unit}",
        Verdict.NO_DATA: "no data, so nothing about the claim",
        Verdict.TOO_FEW: "too few runs: no verdict",
    }
    return clauses.get(said, str(said))
