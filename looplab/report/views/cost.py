"""Cost per task of one profile's runs: the one computation behind every "$ per task".

The bottom line ("costs $C instead of $D") and the money section (cost table, chart,
price of waiting) both call `cost_figure`; neither recomputes it. A figure left unpriced
says why (`CostFigure.unpriced`), in words a reader can act on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from looplab.analysis.cost import price_of, trace_cost
from looplab.errors import LooplabError
from looplab.latency.spec import profile_name, profile_price
from looplab.report.data.records import RunRecord
from looplab.stats.intervals import bca_median
from looplab.stats.order import median

__all__ = ["CostFigure", "cost_figure"]


@dataclass(frozen=True)
class CostFigure:
    """Median dollars per task of one profile's runs, or why there is none."""

    price: str | None
    """The price entry the profile names (None: it names none)."""
    usd: float | None
    """Median $ per task over the runs with a priced call (None: see `unpriced`)."""
    ci: tuple[float, float] | None
    """BCa 95% interval over tasks (`bca_median`; None under `MIN_PAIRED_N` tasks)."""
    unpriced: str | None
    """Why `usd` is None, in words (None when it is set)."""


def cost_figure(runs: Sequence[RunRecord]) -> CostFigure:
    """The cost per task of `runs` (one profile's) at the price entry their profile names.

    Every run with a trace counts, solved or not (a failed attempt is paid for too); a run
    whose calls carry no token counts is left out of the median. Never raises: a price
    entry that cannot be resolved (an old trace naming an entry since removed) is an
    unpriced figure whose reason names the entry and the error.
    """
    traced = [r for r in runs if r.trace is not None]
    if not traced:
        return CostFigure(None, None, None, "no run carries a trace to price")
    spec = traced[0].profile_spec
    name = profile_price(spec)
    try:
        price = price_of(spec)
    except LooplabError as exc:
        return CostFigure(str(name), None, None, f"its price entry {name!r} is unusable: {exc}")
    if price is None:
        why = (
            "the runs carry no profile (imported without `-p PROFILE`)"
            if spec is None
            else f"the profile {profile_name(spec) or '?'!r} names no price entry"
        )
        return CostFigure(None, None, None, why)
    costs: dict[str, list[float]] = defaultdict(list)
    for record in traced:
        if record.trace is None or not (cost := trace_cost(record.trace, price)).priced_calls:
            continue
        costs[record.task].append(cost.total_usd)
    flat = [c for v in costs.values() for c in v]
    if not flat:
        why = f"price entry {price.name}: no model call in these runs carries token counts"
        return CostFigure(price.name, None, None, why)
    return CostFigure(price.name, median(flat), bca_median(costs), None)
