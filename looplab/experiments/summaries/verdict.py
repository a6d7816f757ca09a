"""Is the environment sound? The scripted reference runs say.

A run on a simulated backend with the `scripted` policy replays the task's reference
solution: when it ends normally (`finish`/`answer`) and the task's check still fails, the
model is not to blame. The sandbox could not run the tests, a tool is missing, the
workspace was hidden... the environment is broken, and every figure of the experiment is
suspect. `reference_verdict` finds such runs among an experiment's complete traces;
`looplab run` prints its message and exits non-zero when it is not `ok`.

Scripted runs cut short by a budget or by backend errors (injected faults) are listed
apart: they are not evidence about the environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from looplab.errors import TraceError
from looplab.traces.end_reason import FINISHED_ENDS, EndReasonValue
from looplab.traces.io import read_trace

__all__ = ["REFERENCE_MODEL", "ReferenceRun", "ReferenceVerdict", "reference_verdict"]

REFERENCE_MODEL = "looplab-scripted"
"""The simulator model that replays reference solutions."""


@dataclass(frozen=True)
class ReferenceRun:
    """An unsolved scripted reference run.

    Attributes:
        trace: its trace file name.
        task: the task id.
        backend: the backend (cell) name.
        end_reason: how the agent loop ended.
        check_output: the end of what the task's check printed.
    """

    trace: str
    task: str
    backend: str
    end_reason: EndReasonValue
    check_output: str


@dataclass
class ReferenceVerdict:
    """What the scripted reference runs of an experiment show.

    Attributes:
        reference_runs: complete scripted runs found.
        broken: runs that ended normally with a failing check (environment broken).
        cut_short: unsolved runs that ended by a budget or backend error (not evidence).
    """

    reference_runs: int = 0
    broken: list[ReferenceRun] = field(default_factory=list)
    cut_short: list[ReferenceRun] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no reference run shows a broken environment."""
        return not self.broken

    @property
    def message(self) -> str:
        """One paragraph for people: what failed, and what the check said (empty when ok)."""
        if self.ok:
            return ""
        first = self.broken[0]
        tail = first.check_output.strip().splitlines()[-3:]
        return (
            f"ENVIRONMENT BROKEN: {len(self.broken)} of {self.reference_runs} scripted "
            "reference runs (which replay the reference solution) ended normally but failed "
            "their check, so the sandbox, not the model, is failing; the experiment's figures "
            f"are not trustworthy. First: {first.task} on {first.backend} ({first.trace}); "
            f"its check said: {' | '.join(tail) or '(nothing)'}"
        )


def reference_verdict(trace_dir: Path) -> ReferenceVerdict:
    """Judge the environment by the complete scripted runs under `trace_dir`.

    Unreadable and incomplete traces are ignored (the runner reports those as failed cells).
    """
    verdict = ReferenceVerdict()
    for path in sorted(trace_dir.glob("*.jsonl")):
        try:
            trace = read_trace(path)
        except TraceError:
            continue
        end = trace.end
        header = trace.header
        if end is None or header.model != REFERENCE_MODEL:
            continue
        if header.backend.get("kind", "simulated") != "simulated":
            continue
        verdict.reference_runs += 1
        if end.success is not False:
            continue
        run = ReferenceRun(
            trace=path.name,
            task=header.task or "?",
            backend=str(header.cell.backend or header.backend.get("name") or "?"),
            end_reason=end.end_reason,
            check_output=end.check_output or "",
        )
        (verdict.broken if end.end_reason in FINISHED_ENDS else verdict.cut_short).append(run)
    return verdict
