""" "Two minutes for a click?": time per action of computer-use agents at the two rates.

The press line "no more waiting two minutes for the AI to click a button", checked: for
each kind of computer-use run in the report, the median time per action
(`report.actions`: one acting step with its planner, reflection and look-only steps) at
the slowest and the fastest group, each with a 95% BCa CI over runs (`bca_median`: a
run's actions resampled together; none under `MIN_PAIRED_N` runs), the per-action
speedup (`bca_speedup`, paired by task, a workload's draws by cell), and what the time
per action is made of at each rate (`report.actions.PARTS`, summed over the actions).

Rows (only when the report has computer-use runs):

- **bundled web tasks**: looplab's computer-use agent on the bundled web tasks (their
  observation kinds, from the trace, in the label);
- **workload NAME**: each computer-use workload (one with observation or planner
  parameters), e.g. browser-use + GPT-4o, and the same with a reasoning model's planner
  and reflection calls.

Verdicts against the press line's two minutes (`CLICK_WAIT_S`), in the vocabulary of
`looplab.claims.verdicts` (`wait_verdict`): `no two-minute wait` (the slow CI wholly under
it), `wait removed` (slow over, fast under), `still minutes` (fast over), `undecided`,
`too few runs` (under `MIN_PAIRED_N` runs), `no data`.
The sentence says, from the numbers, how much of the wait the fast rate removes for that
kind of agent (`most of the wait` from 50% less time per action, `part of` from 20%,
`hardly` below), what the slow action was made of and what dominates after it (the two
largest parts of the mean action at each rate).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from looplab.claims.verdicts import wait_verdict
from looplab.errors import LooplabError
from looplab.report.data.actions import PARTS, actions
from looplab.report.data.records import RunRecord
from looplab.report.views.compare import keyed
from looplab.stats.intervals import MIN_PAIRED_N, bca_median, bca_speedup, median
from looplab.tasks.references import is_trace_driven, parse_reference
from looplab.workloads.model import load_workload

__all__ = [
    "CI_METHOD",
    "CLICK_TITLE",
    "CLICK_WAIT_S",
    "ClickRow",
    "ClickSide",
    "click_groups",
    "click_json",
    "click_rows",
]

_PARENTHESES = re.compile(r" ?\([^)]*\)")
CLICK_TITLE = 'Two minutes for a click? Time per browser action ("no more waiting two minutes")'
"""The rows' heading (panel and report)."""
CLICK_WAIT_S = 120.0
"""The press line's wait per click: "two minutes"."""
CI_METHOD = "95% BCa CI over runs"
"""The interval of a row's medians (a run's actions resampled together)."""


@dataclass
class ClickSide:
    """One rate's time per action."""

    runs: int
    actions: int
    median_s: float | None
    ci: tuple[float, float] | None
    parts: dict[str, float]
    """Seconds per action by `PARTS` key (mean composition: summed over actions / count)."""
    units: dict[str, list[float]] = field(default_factory=dict, repr=False)
    """Action seconds per bootstrap unit."""

    @property
    def dominant(self) -> tuple[str, float]:
        """(part key, share of the action's time) of the largest part."""
        total = sum(self.parts.values())
        key = max(self.parts, key=lambda k: self.parts[k])
        return key, (self.parts[key] / total if total > 0 else 0.0)


@dataclass
class ClickRow:
    """One kind of computer-use run: time per action at the slow and the fast rate."""

    key: str
    label: str
    kind: str
    agent: str
    n: int
    """Paired units (tasks; a workload's draws)."""
    slow: ClickSide
    fast: ClickSide
    speedup: float | None
    speedup_ci: tuple[float, float] | None
    verdict: str = ""
    sentence: str = ""


def _computer_use_workload(task: str) -> bool:
    """Whether a trace-driven task is a computer-use workload (it has observation or
    planner parameters); False for a recorded shape or an unreadable workload."""
    reference = parse_reference(task)
    if reference is None or reference.kind != "model":
        return False
    try:
        p = load_workload(reference.path).parameters
    except LooplabError:
        return False
    return any(x is not None for x in (p.observation_s, p.observation_tokens, p.planner))


def click_groups(runs: Sequence[RunRecord]) -> dict[str, list[RunRecord]]:
    """Computer-use runs by row key: `web` (looplab's computer-use agent, live) or the
    workload task (computer-use workloads); other runs are left out."""
    groups: dict[str, list[RunRecord]] = defaultdict(list)
    workloads: dict[str, bool] = {}
    for run in runs:
        if is_trace_driven(run.task):
            if run.task not in workloads:  # read each workload file once, not once per run
                workloads[run.task] = _computer_use_workload(run.task)
            if workloads[run.task]:
                groups[run.task].append(run)
        elif run.agent == "computer_use":
            groups["web"].append(run)
    return dict(groups)


def _unit(run: RunRecord, cell: tuple[str, int]) -> str:
    """Bootstrap unit: the task, or the cell for a workload's draws (a new task each)."""
    return f"{cell[0]}#{cell[1]}" if is_trace_driven(run.task) else cell[0]


def _pick(runs: Sequence[RunRecord], cells: set[tuple[str, int]]) -> dict[str, list[RunRecord]]:
    """The runs of the given cells (not known to fail) by bootstrap unit."""
    found: dict[str, list[RunRecord]] = defaultdict(list)
    for cell, group in keyed(runs).items():
        if cell in cells:
            found[_unit(group[0], cell)] += [r for r in group if r.outcome != "failed"]
    return {unit: group for unit, group in found.items() if group}


def _side(picked: dict[str, list[RunRecord]]) -> ClickSide:
    """Median time per action with its CI over units, and the mean composition."""
    units: dict[str, list[float]] = {}
    parts = dict.fromkeys(PARTS, 0.0)
    for unit, group in picked.items():
        found = [a for run in group for a in actions(run)]
        units[unit] = [a.seconds for a in found]
        for action in found:
            for key, value in action.parts.items():
                parts[key] += value
    times = [t for v in units.values() for t in v]
    count = len(times)
    per = {k: v / count for k, v in parts.items()} if count else parts
    return ClickSide(
        runs=sum(len(g) for g in picked.values()),
        actions=count,
        median_s=median(times) if times else None,
        ci=bca_median(units),
        parts=per,
        units=units,
    )


def _ci(side: ClickSide) -> str:
    return f" [95% BCa CI {side.ci[0]:.1f}-{side.ci[1]:.1f} s]" if side.ci else ""


def _effect(removed: float) -> str:
    """How much of the wait the fast rate removes, in words (module docstring)."""
    if removed >= 0.5:
        return "removes most of the wait"
    if removed >= 0.2:
        return "removes part of the wait"
    return "hardly shortens the wait"


def _made_of(side: ClickSide) -> str:
    """`page loads + observation 66%, planning + reflection calls 25%` (top two parts)."""
    total = sum(side.parts.values()) or 1.0
    top = sorted(side.parts, key=lambda k: -side.parts[k])[:2]
    return ", ".join(f"{PARTS[k]} {side.parts[k] / total:.0%}" for k in top if side.parts[k] > 0)


def _sentence(row: ClickRow, slow_tps: float, fast_tps: float) -> str:
    slow, fast = row.slow, row.fast
    if slow.median_s is None or fast.median_s is None or not fast.median_s:
        return f"{row.label}: no actions at both rates, so nothing about the wait."
    removed = 1 - fast.median_s / slow.median_s
    ci = "" if slow.ci else f" (n={row.n} runs, under the {MIN_PAIRED_N} a CI needs)"
    long = (
        "no two-minute wait even at the slow rate"
        if slow.median_s < CLICK_WAIT_S
        else "a wait of minutes at the slow rate"
    )
    return (
        f"{row.label}: {slow.median_s:.1f} s per action at {slow_tps:g} tok/s{_ci(slow)}, "
        f"{fast.median_s:.1f} s at {fast_tps:g} tok/s{_ci(fast)}{ci}, median over "
        f"{slow.actions} and {fast.actions} actions: {long}; for {row.agent}, "
        f"{fast_tps:g} tok/s {_effect(removed)} ({removed:.0%} less per action). An action at "
        f"{slow_tps:g} tok/s is {_made_of(slow)}; at {fast_tps:g} tok/s {_made_of(fast)}."
    )


def _label(key: str, runs: Sequence[RunRecord]) -> tuple[str, str, str]:
    """(label, kind, what ran) of a row, from the runs."""
    clock = {r.clock for r in runs}
    kind = "live, virtual clock" if clock == {"virtual"} else "live"
    if key == "web":
        seen = sorted(
            {
                str(t.observation.get("kind"))
                for r in runs
                if r.trace is not None
                for t in r.trace.tool_calls()
                if t.observation
            }
        )
        obs = "/".join(seen) or "aria"
        tasks = len({r.task for r in runs})
        label = f"bundled web tasks, {obs} observations"
        return label, kind, f"looplab's computer-use agent on {tasks} bundled web tasks ({obs})"
    reference = parse_reference(key)
    name = key.removeprefix("workload/")
    what = name
    if reference is not None:
        try:
            what = _PARENTHESES.sub("", load_workload(reference.path).description)
            what = what.split(";")[0]
        except LooplabError:
            pass
    return f"workload {name}", kind, what


def click_rows(
    by_group: dict[str, list[RunRecord]], slow: str, fast: str, rates: tuple[float, float]
) -> list[ClickRow]:
    """One row per kind of computer-use run (module docstring) over the cells both the
    slow and the fast group ran; [] without computer-use runs."""
    if not slow or slow == fast:
        return []
    left = click_groups(by_group.get(slow, []))
    right = click_groups(by_group.get(fast, []))
    rows: list[ClickRow] = []
    for key in sorted(set(left) & set(right), key=lambda k: (k != "web", k)):
        cells = set(keyed(left[key])) & set(keyed(right[key]))
        a, b = _pick(left[key], cells), _pick(right[key], cells)
        shared = sorted(set(a) & set(b))
        a, b = {u: a[u] for u in shared}, {u: b[u] for u in shared}
        if not shared:
            continue
        label, kind, agent = _label(key, left[key])
        s, f = _side(a), _side(b)
        speedup = s.median_s / f.median_s if s.median_s and f.median_s else None
        slow_units, fast_units = s.units, f.units
        row = ClickRow(
            f"click:{key}",
            label,
            kind,
            agent,
            n=len(shared),
            slow=s,
            fast=f,
            speedup=speedup,
            speedup_ci=bca_speedup(slow_units, fast_units),
        )
        medians = (s.median_s, f.median_s)
        row.verdict = wait_verdict(row.n, medians, s.ci, f.ci, CLICK_WAIT_S)
        row.sentence = _sentence(row, *rates)
        rows.append(row)
    return rows


def _side_json(side: ClickSide) -> dict[str, Any]:
    ci = side.ci or (None, None)
    key, share = side.dominant
    return {
        "runs": side.runs,
        "actions": side.actions,
        "median_s": side.median_s,
        "ci_low": ci[0],
        "ci_high": ci[1],
        "parts_s": side.parts,
        "dominant": key,
        "dominant_share": share,
    }


def click_json(row: ClickRow) -> dict[str, Any]:
    """A row for scripts (`looplab report --format json`: `claim.click`)."""
    ci = row.speedup_ci or (None, None)
    return {
        "key": row.key,
        "label": row.label,
        "kind": row.kind,
        "agent": row.agent,
        "n": row.n,
        "interval": CI_METHOD if row.slow.ci else None,
        "slow": _side_json(row.slow),
        "fast": _side_json(row.fast),
        "speedup": row.speedup,
        "speedup_ci_low": ci[0],
        "speedup_ci_high": ci[1],
        "wait_s": CLICK_WAIT_S,
        "verdict": row.verdict,
        "sentence": row.sentence,
    }
