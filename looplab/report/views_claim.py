"""The claim check, "Is 750 tok/s worth it?": every kind of evidence side by side.

Rows, each a speedup of the fast profile over the slow one (80 -> 750 tok/s in the
mission's pair) with a 95% CI, as "percent shorter" too, and one verdict sentence
computed from the numbers:

- **live** rows: this report's runs of the slowest and fastest group, split by kind of
  task: the bundled tasks, and each trace-driven task (a calibrated workload's draws, or
  a recorded run's shape). The statistic is the headline's, median slow task time over
  median fast task time over the cells both ran; the CI is the paired bootstrap of
  `report.stats` (tasks resampled as clusters; a workload's draws are clusters of their
  own, as each repetition draws a new task, the same for both profiles);
- **corpus** rows (virtual): the shipped corpus of real public runs, re-timed at the two
  decode rates by `looplab.analysis.retime.sweep_trace` (model calls recomputed from
  their token counts, tools and harness as recorded), one row per harness (its models in
  a detail table per harness/model); runs without model or tool times cannot be re-timed
  and are counted apart ("no timed runs");
- the **Amdahl** band: `1 / ((1 - f) + f / r)` for the decode shares f (decode plus
  hidden reasoning, at the slow rate) measured in these rows' runs, p10-p90, r the
  decode-rate ratio; and the share f a claim needs;
- the **claims** (`CLAIMS`): "40-60% shorter coding tasks" and "54%".

Verdicts compare a row's CI (its point when there is none) with the claim's band of
40-60% shorter (1.67-2.5x): `supports` (the CI inside it), `consistent` (overlapping,
point inside), `exceeds` / `below` (the CI wholly beyond / short of it), `inconclusive`
(overlapping, point outside), `no data`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from looplab.errors import LooplabError
from looplab.report.claim_rows import (
    BAND,
    CLAIMS,
    ClaimRow,
    ClaimView,
    amdahl,
    band,
    make_row,
    required_share,
    shorter,
    verdict,
)
from looplab.report.model import RunRecord
from looplab.report.stats import median, quantile, speedup_ci
from looplab.report.views_claim_corpus import corpus_rows
from looplab.report.views_compare import keyed
from looplab.tasks.references import is_trace_driven, parse_reference
from looplab.workloads.model import load_workload

__all__ = ["DEFAULT_RATES", "claim_view"]

_PARENTHESES = re.compile(r" \([^)]*\)")

DEFAULT_RATES = (80.0, 750.0)
"""The mission's pair, used for the corpus rows when the report has no rated pair."""


def _share(run: RunRecord) -> float | None:
    if run.task_s <= 0:
        return None
    return ((run.decode_s or 0.0) + run.reasoning_s) / run.task_s


def _cluster(run: RunRecord, key: tuple[str, int]) -> str:
    """Bootstrap cluster: the task, or the cell for a workload's draws (a new task each)."""
    reference = parse_reference(run.task)
    return f"{key[0]}#{key[1]}" if reference and reference.kind == "model" else key[0]


def _live_row(
    key: str, label: str, agent: str, slow: list[RunRecord], fast: list[RunRecord]
) -> tuple[ClaimRow, list[float]]:
    """A live row over the cells both groups ran (unsolved runs left out)."""
    slow_cells, fast_cells = keyed(slow), keyed(fast)
    shared = sorted(set(slow_cells) & set(fast_cells))
    a: dict[str, list[float]] = defaultdict(list)
    b: dict[str, list[float]] = defaultdict(list)
    shares: list[float] = []
    for cell in shared:
        left = [r for r in slow_cells[cell] if r.success is not False]
        right = [r for r in fast_cells[cell] if r.success is not False]
        if not left or not right:
            continue
        cluster = _cluster(left[0], cell)
        a[cluster] += [r.task_s for r in left]
        b[cluster] += [r.task_s for r in right]
        shares += [s for r in left if (s := _share(r)) is not None]
    slow_times = [t for v in a.values() for t in v]
    fast_times = [t for v in b.values() for t in v]
    speedup = None
    if slow_times and fast_times and median(fast_times) > 0:
        speedup = median(slow_times) / median(fast_times)
    clocks = {r.clock for r in slow + fast}
    kind = "live, virtual clock" if clocks == {"virtual"} else "live"
    return make_row(
        key, kind, label, agent,
        n=len(slow_times), speedup=speedup,
        ci=speedup_ci(dict(a), dict(b)) if speedup else None,
        decode_share=median(shares) if shares else None,
    ), shares  # fmt: skip


def _workload_name(task: str) -> str:
    """`mini-swe-agent-deepseek` for `workload/mini-swe-agent-deepseek` or `workload:x/y.yaml`."""
    if task.startswith("workload/"):
        return task.removeprefix("workload/")
    return Path(task.partition(":")[2]).stem


def _agent(task: str, runs: Sequence[RunRecord]) -> tuple[str, str]:
    """(label, kind of agent) of a live row."""
    if task == "bundled":
        tools = sum(r.tool_s for r in runs) / max(1, sum(r.steps for r in runs))
        return (
            "bundled coding tasks",
            f"a scripted agent on short bundled coding tasks ({tools:.2f} s of tools per step)",
        )
    reference = parse_reference(task)
    if reference is not None and reference.kind == "model":
        try:
            model = load_workload(reference.path)
            what = _PARENTHESES.sub("", model.description) or model.name
        except LooplabError:
            what = task
        return f"workload {_workload_name(task)}", what
    name = reference.path.name if reference else task
    return f"recorded shape {name}", f"the recorded run {name}"


def _live_rows(
    by_group: dict[str, list[RunRecord]], slow: str, fast: str
) -> tuple[list[ClaimRow], list[float]]:
    """The bundled tasks and each trace-driven task of the slow and fast groups."""
    kinds: dict[str, tuple[list[RunRecord], list[RunRecord]]] = defaultdict(lambda: ([], []))
    for side, group in ((0, slow), (1, fast)):
        for run in by_group.get(group, []):
            kinds[run.task if is_trace_driven(run.task) else "bundled"][side].append(run)
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


def _amdahl_row(shares: Sequence[float], ratio: float) -> ClaimRow:
    """The Amdahl band over the measured decode shares (p10-p90) and what the claim needs."""
    need = (required_share(BAND.low, ratio), required_share(BAND.high, ratio))
    if not shares:
        return ClaimRow("amdahl", "bound", "Amdahl band", "no measured decode share", n=0,
                        speedup=None, ci=None, verdict="bound",
                        sentence="Amdahl band: no measured decode share.")  # fmt: skip
    low, mid, high = (quantile(list(shares), q) for q in (0.1, 0.5, 0.9))
    row = make_row(
        "amdahl", "bound", "Amdahl band",
        f"decode shares f of {low:.0%}-{high:.0%} (p10-p90 of the runs above) at the slow rate",
        n=len(shares), speedup=amdahl(mid, ratio),
        ci=(amdahl(low, ratio), amdahl(high, ratio)), decode_share=mid,
    )  # fmt: skip
    row.verdict = "bound"
    lo, hi = amdahl(low, ratio), amdahl(high, ratio)
    row.sentence = (
        f"Amdahl band: a {ratio:.1f}x faster decode gives {lo:.2f}-{hi:.2f}x "
        f"({shorter(lo):.0%}-{shorter(hi):.0%} shorter) for decode shares f = "
        f"{low:.0%}-{high:.0%} (median {mid:.0%}) measured here; 40-60% shorter needs f = "
        f"{need[0]:.0%}-{need[1]:.0%} at the slow rate, so the claim holds only for agents "
        "that spend that share of their time decoding."
    )
    return row


_GROUPS = (
    ("supported by", ("supports", "consistent")),
    ("undecided by", ("inconclusive",)),
    ("contradicted by", ("below", "exceeds")),
)


def _claim_rows(data: Sequence[ClaimRow]) -> list[ClaimRow]:
    """The claims, each saying which data rows support, leave open or contradict it."""
    rows: list[ClaimRow] = []
    timed = [r for r in data if r.speedup is not None]
    for claim in CLAIMS:
        low_s, high_s = band(claim)
        point = low_s == high_s
        verdicts = {r.key: verdict(r.speedup, r.ci, claim) for r in timed}
        parts = []
        for phrase, kinds in _GROUPS:
            named = [r for r in timed if verdicts[r.key] in kinds]
            if named:
                parts.append(f"{phrase} {_names(named, verdicts)}")
        target = f"{claim.low:.0%}" if point else f"{claim.low:.0%}-{claim.high:.0%}"
        speed = f"{low_s:.2f}x" if point else f"{low_s:.2f}-{high_s:.2f}x"
        sentence = f"Claim {claim.label}, i.e. {speed}: " + ("; ".join(parts) or "no data") + "."
        rows.append(
            ClaimRow(claim.key, "claim", f"claim: {target} shorter", claim.source, n=0,
                     speedup=low_s if point else None, ci=None if point else (low_s, high_s),
                     verdict="claim", sentence=sentence)
        )  # fmt: skip
    return rows


def _names(rows: Sequence[ClaimRow], verdicts: dict[str, str]) -> str:
    """`label (2.64x, exceeds)`: the verdict named where it says which way."""
    named = []
    for row in rows:
        way = verdicts[row.key]
        note = f", {way}" if way in ("below", "exceeds") else ""
        named.append(f"{row.label} ({row.speedup or 0.0:.2f}x{note})")
    return ", ".join(named)


def _summary(rows: Sequence[ClaimRow], ratio: float) -> str:
    parts = [
        f"{r.label} {shorter(r.speedup):.0%} shorter ({r.verdict})"
        for r in rows
        if r.speedup is not None and r.kind not in ("bound", "claim")
    ]
    return (
        f"Is {ratio:.1f}x faster decode worth it? Against the claimed 40-60% shorter tasks: "
        + "; ".join(parts)
        + "."
    )


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
    return ClaimView(
        slow=slow or f"{slow_tps:g} tok/s",
        fast=fast or f"{fast_tps:g} tok/s",
        slow_tps=slow_tps,
        fast_tps=fast_tps,
        rows=everything + _claim_rows(data),
        corpus_detail=detail,
        sentence=_summary(data, ratio),
    )
