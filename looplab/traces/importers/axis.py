"""An import's run origin: the first model call's start (else the earliest time it has).

The run axis itself (placement of untimed items, wall times) is the trace builder's:
`looplab.traces.assembly.axis.RunAxis`, on epoch seconds for imports.
"""

from __future__ import annotations

from looplab.traces.importers.drafts import RunDraft

__all__ = ["run_origin"]


def run_origin(draft: RunDraft) -> float | None:
    """The first model call's start, else the earliest time of any call or sandbox
    operation (a Harbor trial without a trajectory), else None."""
    for step in draft.steps:
        if step.model is not None and step.model.start is not None:
            return step.model.start
    times = [
        t
        for step in draft.steps
        for t in [
            *(x.start for x in step.tools),
            *(x.end for x in step.tools),
            *(x.start for x in step.sandbox),
            *([step.model.end] if step.model else []),
        ]
        if t is not None
    ]
    return min(times) if times else None
