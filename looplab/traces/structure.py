"""A trace's run graph checked at the door: what `read_trace` refuses before any reader.

A `looplab-2` trace declares its sub-runs with `subrun` events (`schema.SubRunEvent`);
re-timing walks that tree (`looplab.analysis.graph`). A damaged tree would be re-timed
silently into another number (a sub-run whose parent is missing hangs under the top-level
run, a cycle drops out of the walk), so a trace whose tree is not one is refused here,
once, for every reader: a file named on its own is an error, one found in a directory is
named on stderr and set aside (`looplab.traces.inputs.read_traces`).

Refused (`structure_problem` says which sub-run and why):

- a `subrun` event without its id, or two declaring one id;
- a sub-run whose parent is itself, or names a sub-run no event declares;
- a cycle of parents (no way up to the top-level run);
- a `parent_step` or `join_step` outside the parent's steps (below 0 or past its last
  step; `join_step` only once the run has ended, since a run in progress has not
  reached its join yet), or a `join_step` before the `parent_step`.

Events naming a sub-run that no `subrun` event declares stay readable: they hang under
the top-level run, as documented in `graph.run_tree`. One pass over the events and one
over the sub-runs (linear; no recursion, so a chain of any depth is checked).
"""

from __future__ import annotations

from collections.abc import Sequence

from looplab.traces.schema import RunEndEvent, SubRunEvent, TraceEvent

__all__ = ["structure_problem"]


def structure_problem(events: Sequence[TraceEvent]) -> str | None:
    """What is wrong with the run graph of `events` (module docstring), None if nothing."""
    declared: dict[str, SubRunEvent] = {}
    last_step: dict[str | None, int] = {}
    ended = False
    for event in events:
        if isinstance(event, SubRunEvent):
            if event.subrun is None:
                return "a subrun event has no `subrun` id"
            if event.subrun in declared:
                return f"sub-run {event.subrun!r} is declared twice"
            declared[event.subrun] = event
            continue
        ended = ended or isinstance(event, RunEndEvent)
        if event.step is not None:
            last_step[event.subrun] = max(event.step, last_step.get(event.subrun, event.step))
    for run_id, sub in declared.items():
        problem = _own_problem(run_id, sub, declared, last_step, ended)
        if problem is not None:
            return f"sub-run {run_id!r}: {problem}"
    return _cycle(declared)


def _own_problem(
    run_id: str,
    sub: SubRunEvent,
    declared: dict[str, SubRunEvent],
    last_step: dict[str | None, int],
    ended: bool,
) -> str | None:
    """One declaration's own problem: its parent and its spawn and join steps."""
    if sub.parent == run_id:
        return "its parent is itself"
    if sub.parent is not None and sub.parent not in declared:
        return f"its parent {sub.parent!r} is not declared by any subrun event"
    parent = "the top-level run" if sub.parent is None else f"sub-run {sub.parent!r}"
    last = last_step.get(sub.parent)
    allowed = f"0-{last}" if last is not None else "none: it has no steps"
    checks = [("parent_step", sub.parent_step)]
    if ended:  # a run in progress has not reached its join yet
        checks.append(("join_step", sub.join_step))
    for name, step in checks:
        if step is not None and (step < 0 or last is None or step > last):
            return f"{name} {step} is outside {parent}'s steps (allowed: {allowed})"
    spawn, join = sub.parent_step, sub.join_step
    if spawn is not None and join is not None and join < spawn:
        return f"join_step {join} comes before its spawning parent_step {spawn}"
    return None


def _cycle(declared: dict[str, SubRunEvent]) -> str | None:
    """A cycle of parents, named by its members; None when every chain reaches the top."""
    state: dict[str, int] = {}  # 1: on the current chain, 2: reaches the top-level run
    for start in declared:
        chain: list[str] = []
        at: str | None = start
        while at is not None and state.get(at) is None:
            state[at] = 1
            chain.append(at)
            at = declared[at].parent
        if at is not None and state[at] == 1:
            loop = chain[chain.index(at) :]
            return "a cycle of parents: " + " -> ".join(repr(r) for r in [*loop, at])
        for run_id in chain:
            state[run_id] = 2
    return None
