"""What the claim panel calls a live row's runs: from their identity only.

A run's row (`live_group`) and its words (`live_label`) come from the trace's identity
and source (`traces/identity.py`), never from guesses: "bundled" only for looplab's own
agents (`looplab run`), "simulated model" only where the simulator made the replies.

- looplab's agents: row `bundled`, label `bundled coding tasks`, what ran `looplab's
  coding agent (simulated model) on bundled tasks: 4 coding`;
- `looplab wrap`: row `wrapped:NAME`, label `NAME on SET tasks`, what ran `the wrapped
  agent NAME (its own model's recorded replies, re-timed) on its tasks: 3 app`;
- `looplab import` / `collect`: row `imported:AGENT`, label `imported AGENT runs`, what
  ran `AGENT runs imported from FORMAT (model as recorded): 1 task`;
- a workload or a recorded shape: its task id (named in `views.py`).

A wrapped or imported run's task set is the part of its task id before `/`
(`--task app/login` -> `app`), the rule of `traces.identity.task_set`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from looplab.report.data.pairing import identity_of_record
from looplab.report.data.records import RunRecord
from looplab.tasks.references import is_trace_driven
from looplab.traces.identity import task_set

__all__ = ["REPLIES_WORDS", "live_group", "live_label"]

REPLIES_WORDS = {
    "simulator": "simulated replies: the simulator's filler, not its own model",
    "recording": "its own model's recorded replies, re-timed",
    "upstream": "its own model, paced",
}
"""A wrapped run's model, by its identity's `replies`."""


def live_group(run: RunRecord) -> str:
    """The live row a run belongs to: its trace-driven task, `wrapped:NAME`,
    `imported:AGENT` or `bundled` (looplab's own agents)."""
    if is_trace_driven(run.task):
        return run.task
    if run.source == "wrap":
        return f"wrapped:{run.agent}"
    if run.source.startswith("import:"):
        return f"imported:{run.agent}"
    return "bundled"


def live_label(group: str, runs: Sequence[RunRecord]) -> tuple[str, str] | None:
    """(label, what ran) of a `bundled`, `wrapped:` or `imported:` row; None for another
    row (a workload or a recorded shape: `views.py` names those)."""
    sets = _task_sets(runs)
    if group == "bundled":
        what = f"{sets} tasks" if not sets.startswith("(") else f"tasks {sets}"
        own = sorted({r.agent for r in runs})
        agents = f"looplab's {' and '.join(own)} agent{'s' if len(own) > 1 else ''}"
        words = f"{agents} (simulated model) on bundled tasks: {_counts(runs)}"
        return f"bundled {what}", words
    if group.startswith("wrapped:"):
        name = group.removeprefix("wrapped:")
        replies = sorted({_replies(r) for r in runs})
        return (
            f"{name} on {sets} tasks",
            f"the wrapped agent {name} ({'; '.join(replies)}) on its tasks: {_counts(runs)}",
        )
    if group.startswith("imported:"):
        agent = group.removeprefix("imported:")
        formats = sorted({r.source.removeprefix("import:") for r in runs})
        n = len({r.task for r in runs})
        return (
            f"imported {agent} runs",
            f"{agent} runs imported from {', '.join(formats)} (model as recorded): "
            f"{n} task{'s' if n != 1 else ''}",
        )
    return None


def _replies(run: RunRecord) -> str:
    replies = identity_of_record(run).replies
    return REPLIES_WORDS.get(replies or "", "model as recorded")


def _task_sets(runs: Sequence[RunRecord]) -> str:
    """`coding`, or `(4 coding, 1 web)` for several: the runs' task sets (`task_set`, the
    identity's rule for looplab's own and wrapped runs)."""
    sets = sorted({task_set(r.task) for r in runs})
    return sets[0] if len(sets) == 1 else f"({_counts(runs)})"


def _counts(runs: Sequence[RunRecord]) -> str:
    """`4 coding, 1 web`: distinct tasks per task set."""
    kinds: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        kinds[task_set(run.task)].add(run.task)
    return ", ".join(f"{len(tasks)} {kind}" for kind, tasks in sorted(kinds.items()))
