"""The claim check, "Is 750 tok/s worth it?": every kind of evidence side by side.

Rows, each a speedup of the fast profile over the slow one (80 -> 750 tok/s in the
mission's pair) with a 95% CI, as "percent shorter" too, and one verdict sentence
computed from the numbers:

- **live** rows (section "Your runs"): this report's runs of the slowest and fastest
  group, split by what ran: looplab's own agents on bundled tasks, each wrapped (foreign)
  agent, and each trace-driven task (a calibrated workload's draws, or a recorded run's
  shape); labels name the agent kinds and task kinds found in the runs. The statistic is
  the headline's, median slow task time over median fast task time over the cells both
  ran; the interval is the BCa bootstrap of `report.stats.bca_speedup` (tasks resampled as
  clusters; a workload's draws are clusters of their own, as each repetition draws a new
  task, the same for both profiles), given only from `MIN_PAIRED_N` units on;
- **corpus** rows (section "Reference", virtual): the shipped corpus of real public
  runs, re-timed at the two decode rates by `looplab.analysis.retime.sweep_trace` (model
  calls recomputed from their token counts, tools and harness as recorded), one row per
  harness (its models in a detail table per harness/model); runs without model or tool
  times cannot be re-timed and are counted apart ("no timed runs");
- the **Amdahl** band: `1 / ((1 - f) + f / r)` for the decode shares f (decode plus
  hidden reasoning, at the slow rate) measured in these rows' runs, p10-p90, r the
  decode-rate ratio; and the share f a claim needs;
- the **claims** (`panel_claims()`, the shipped claim entries with a panel wording):
  "40-60% shorter coding tasks" and "54%".

Verdicts: `rows.row_verdict`, in the words of `looplab.claims.verdicts` (none under
`MIN_PAIRED_N` units).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from looplab.claims.verdicts import Verdict, band_text
from looplab.errors import LooplabError
from looplab.report.claims.click_views import click_rows
from looplab.report.claims.corpus import corpus_rows
from looplab.report.claims.labels import live_group, live_label
from looplab.report.claims.rows import (
    ClaimRow,
    ClaimView,
    amdahl,
    band_claim,
    make_row,
    panel_claims,
    panel_text,
    required_share,
    row_verdict,
    shorter,
    speedup_band,
)
from looplab.report.data.records import RunRecord
from looplab.report.views.observations import observation_rows
from looplab.report.views.speedup import paired_speedup
from looplab.stats.intervals import MIN_PAIRED_N, median, quantile
from looplab.tasks.references import parse_reference
from looplab.workloads.model import load_workload

__all__ = ["DEFAULT_RATES", "claim_view"]

_PARENTHESES = re.compile(r" \([^)]*\)")

DEFAULT_RATES = (80.0, 750.0)
"""The mission's pair, used for the corpus rows when the report has no rated pair."""


def _share(run: RunRecord) -> float | None:
    if run.task_s <= 0:
        return None
    return ((run.decode_s or 0.0) + run.reasoning_s) / run.task_s


def _live_row(
    key: str, label: str, agent: str, slow: list[RunRecord], fast: list[RunRecord]
) -> tuple[ClaimRow, list[float]]:
    """A live row over the cells both groups ran (unsolved runs left out): the same
    figure and interval as the bottom line (`report.views.speedup.paired_speedup`)."""
    paired = paired_speedup(slow, fast)
    shares = [s for r in paired.slow_runs if (s := _share(r)) is not None]
    clocks = {r.clock for r in slow + fast}
    kind = "live, virtual clock" if clocks == {"virtual"} else "live"
    row = make_row(
        key,
        kind,
        label,
        agent,
        n=paired.n,
        speedup=paired.speedup,
        ci=paired.ci,
        decode_share=median(shares) if shares else None,
    )
    return row, shares


def _workload_name(task: str) -> str:
    """`mini-swe-agent-deepseek` for `workload/mini-swe-agent-deepseek` or `workload:x/y.yaml`."""
    if task.startswith("workload/"):
        return task.removeprefix("workload/")
    return Path(task.partition(":")[2]).stem


def _agent(group: str, runs: Sequence[RunRecord]) -> tuple[str, str]:
    """(label, what ran) of a live row, both from the runs' identity (`labels.py`)."""
    named = live_label(group, runs)
    if named is not None:
        return named
    reference = parse_reference(group)
    if reference is not None and reference.kind == "model":
        try:
            model = load_workload(reference.path)
            what = _PARENTHESES.sub("", model.description) or model.name
        except LooplabError:
            what = group
        return f"workload {_workload_name(group)}", what
    name = reference.path.name if reference else group
    return f"recorded shape {name}", f"the recorded run {name}"


def _live_rows(
    by_group: dict[str, list[RunRecord]], slow: str, fast: str
) -> tuple[list[ClaimRow], list[float]]:
    """One row per `_group` of the slow and fast groups' runs."""
    kinds: dict[str, tuple[list[RunRecord], list[RunRecord]]] = defaultdict(lambda: ([], []))
    for side, group in ((0, slow), (1, fast)):
        for run in by_group.get(group, []):
            kinds[live_group(run)][side].append(run)
    rows: list[ClaimRow] = []
    shares: list[float] = []
    for task in sorted(kinds, key=lambda t: (t != "bundled", t)):
        left, right = kinds[task]
        label, agent = _agent(task, left)
        row, measured = _live_row(f"live:{task}", label, agent, left, right)
        if row.n:
            rows.append(row)
            shares += measured
    return rows, shares


_RANGE = "p10-p90 range"
"""The Amdahl row's interval: the spread of the measured decode shares, not a CI."""


def _amdahl_row(shares: Sequence[float], ratio: float) -> ClaimRow:
    """The Amdahl band over the measured decode shares (p10-p90) and what the claim needs."""
    claimed = band_claim().claimed
    need = (required_share(claimed.low, ratio), required_share(claimed.high, ratio))
    row = ClaimRow(
        "amdahl",
        "bound",
        "Amdahl band",
        "no measured decode share",
        n=len(shares),
        speedup=None,
        ci=None,
        verdict="bound",
        sentence="Amdahl band: no measured decode share.",
        section="bounds",
        interval=_RANGE,
    )
    if not shares:
        return row
    low, mid, high = (quantile(list(shares), q) for q in (0.1, 0.5, 0.9))
    lo, hi = amdahl(low, ratio), amdahl(high, ratio)
    row.agent = f"decode shares f of {low:.0%}-{high:.0%} (p10-p90 of the runs above), slow rate"
    row.speedup, row.ci, row.decode_share = amdahl(mid, ratio), (lo, hi), mid
    row.sentence = (
        f"Amdahl band: a {ratio:.1f}x faster decode gives {lo:.2f}-{hi:.2f}x "
        f"({shorter(lo):.0%}-{shorter(hi):.0%} shorter) for decode shares f = "
        f"{low:.0%}-{high:.0%} (median {mid:.0%}) measured here; {band_text(claimed)} shorter "
        f"needs f = "
        f"{need[0]:.0%}-{need[1]:.0%} at the slow rate, so the claim holds only for agents "
        "that spend that share of their time decoding."
    )
    return row


_GROUPS: tuple[tuple[str, tuple[Verdict, ...]], ...] = (
    ("in line with it", (Verdict.SUPPORTED, Verdict.CONSISTENT)),
    (Verdict.UNDECIDED, (Verdict.UNDECIDED,)),
    (Verdict.FASTER, (Verdict.FASTER,)),
    (Verdict.SLOWER, (Verdict.SLOWER,)),
)
"""How a claim row groups the data rows by their verdict against it."""


def _claim_rows(data: Sequence[ClaimRow]) -> list[ClaimRow]:
    """The claims, each saying which data rows are in line with it, leave it open, or are
    faster or slower than claimed (rows without a verdict are not counted)."""
    rows: list[ClaimRow] = []
    timed = [r for r in data if r.speedup is not None and r.ci is not None]
    for claim in panel_claims():
        low_s, high_s = speedup_band(claim)
        low, high = claim.claimed.low, claim.claimed.high
        point = low_s == high_s
        verdicts = {r.key: row_verdict(r, claim) for r in timed}
        parts = []
        for phrase, kinds in _GROUPS:
            named = [r for r in timed if verdicts[r.key] in kinds]
            if named:
                parts.append(f"{phrase}: {_names(named)}")
        target = f"{low:.0%}" if point else f"{low:.0%}-{high:.0%}"
        speed = f"{low_s:.2f}x" if point else f"{low_s:.2f}-{high_s:.2f}x"
        found = "; ".join(parts) or f"no row has the {MIN_PAIRED_N} runs a verdict needs"
        rows.append(
            ClaimRow(
                claim.name,
                "claim",
                f"claim: {target} shorter",
                panel_text(claim).source,
                n=0,
                speedup=low_s if point else None,
                ci=None if point else (low_s, high_s),
                verdict="claim",
                sentence=f"Claim {panel_text(claim).label}, i.e. {speed}: {found}.",
                section="bounds",
                interval="claimed band",
            )
        )
    return rows


def _names(rows: Sequence[ClaimRow]) -> str:
    """`label (2.64x)`, corpus rows marked as reference."""
    return ", ".join(
        f"{r.label} ({r.speedup or 0.0:.2f}x{', reference' if r.section == 'reference' else ''})"
        for r in rows
    )


def _summary(rows: Sequence[ClaimRow], ratio: float) -> str:
    """The user's rows first; the reference rows after, named as such."""

    def said(section: str) -> str:
        return "; ".join(
            f"{r.label} {shorter(r.speedup):.0%} shorter ({r.verdict})"
            for r in rows
            if r.speedup is not None and r.section == section
        )

    yours, reference = said("yours"), said("reference")
    claimed = band_text(band_claim().claimed)
    text = f"Is {ratio:.1f}x faster decode worth it? Against the claimed {claimed} shorter tasks: "
    text += f"your runs: {yours}." if yours else "no runs of yours to compare."
    return text + (f" Reference (the shipped corpus, re-timed): {reference}." if reference else "")


def claim_view(by_group: dict[str, list[RunRecord]], order: Sequence[str]) -> ClaimView:
    """The claim check over the slowest and fastest groups (`order`: slowest first) and
    the shipped corpus re-timed at their decode rates (80 and 750 tok/s when they have
    none)."""
    slow, fast = (order[0], order[-1]) if len(order) >= 2 else ("", "")
    rates = [by_group[g][0].decode_tps for g in (slow, fast)] if slow else []
    slow_tps, fast_tps = DEFAULT_RATES
    if len(rates) == 2 and rates[0] and rates[1] and rates[1] > rates[0]:
        slow_tps, fast_tps = float(rates[0]), float(rates[1])
    rows, shares = _live_rows(by_group, slow, fast) if slow else ([], [])
    spec = by_group[slow][0].profile_spec if slow else None
    corpus, detail, corpus_shares = corpus_rows(slow_tps, fast_tps, spec)
    data = rows + corpus
    ratio = fast_tps / slow_tps
    everything = [*data, _amdahl_row(shares + corpus_shares, ratio)]
    click = click_rows(by_group, slow, fast, (slow_tps, fast_tps))
    labels = {r.key.removeprefix("click:"): r.label for r in click}
    return ClaimView(
        slow=slow or f"{slow_tps:g} tok/s",
        fast=fast or f"{fast_tps:g} tok/s",
        slow_tps=slow_tps,
        fast_tps=fast_tps,
        rows=everything + _claim_rows(data),
        corpus_detail=detail,
        sentence=_summary(data, ratio),
        click=click,
        observations=observation_rows(by_group[slow], labels) if click else [],
    )
