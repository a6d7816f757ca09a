"""What an import produces: the trace's header and events, and a report of what was recovered."""

from __future__ import annotations

from dataclasses import dataclass

from looplab.traces.end_reason import EndReasonValue
from looplab.traces.schema import TraceEvent, TraceHeader

__all__ = ["ImportReport", "ImportedRun"]


@dataclass
class ImportReport:
    """What an import recovered from one run (printed by `looplab import`)."""

    fmt: str
    run_id: str
    source_path: str
    steps: int
    model_calls: int
    tool_calls: int
    sandbox_ops: int
    prompt_tokens: int | None
    cached_tokens: int | None
    completion_tokens: int | None
    model_s: float | None
    tool_s: float | None
    model_timing: str
    tool_timing: str
    end_reason: EndReasonValue
    success: bool | None
    absent: list[str]
    notes: list[str]
    subruns: int = 0
    """Sub-runs (sub-agents) kept as `subrun` events (looplab-2)."""
    concurrent_calls: int = 0
    """Model and tool calls overlapping another call in time."""
    task_s: float | None = None
    """With sub-runs: the task time (the critical path); `model_s` and `tool_s` are then
    what is on it (set by the import command: `analysis.pathsplit`)."""
    work_s: float | None = None
    """With sub-runs: total work, every agent's own time summed (parallel ones each count)."""
    model: str | None = None
    """The model the run talked to (the header's `model`)."""

    def rows(self) -> list[tuple[str, str]]:
        """(what, value) pairs for a two-column table."""

        def opt(value: object) -> str:
            return "absent" if value is None else str(value)

        def timed(value: float | None, how: str) -> str:
            if value is None:
                return "absent" if how == "absent" else f"absent ({how})"
            return f"{value:.2f} s ({how})"

        every = " (all agents)" if self.subruns else ""
        on_path = self.subruns and self.task_s is not None
        summed = " (on the critical path)" if on_path else every
        return [
            ("source", f"{self.source_path} ({self.fmt})"),
            ("model", opt(self.model)),
            ("steps (main agent)" if every else "steps", str(self.steps)),
            ("model calls" + every, str(self.model_calls)),
            ("tool calls" + every, str(self.tool_calls)),
            ("sandbox operations", str(self.sandbox_ops)),
            ("sub-runs", str(self.subruns)),
            ("concurrent calls", str(self.concurrent_calls)),
            ("prompt tokens", opt(self.prompt_tokens)),
            ("cached tokens", opt(self.cached_tokens)),
            ("completion tokens", opt(self.completion_tokens)),
            ("model time" + summed, timed(self.model_s, self.model_timing)),
            ("tool time" + summed, timed(self.tool_s, self.tool_timing)),
            *(
                [
                    ("task time (critical path)", f"{self.task_s:.2f} s"),
                    ("total work (all agents summed)", f"{self.work_s:.2f} s"),
                ]
                if on_path and self.work_s is not None
                else []
            ),
            ("end", f"{self.end_reason}, success={opt(self.success)}"),
            ("verdict", _verdict(self.success)),
            ("absent", ", ".join(self.absent) or "-"),
        ]


@dataclass
class ImportedRun:
    """One imported run: the trace's header and events, and what could be recovered."""

    header: TraceHeader
    events: list[TraceEvent]
    report: ImportReport


def _verdict(success: bool | None) -> str:
    """The run's verdict as the source gave it (a verifier's, a harness's success)."""
    return "absent" if success is None else ("passed" if success else "failed")
