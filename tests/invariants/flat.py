"""Flat (no sub-run) traces built in memory, with known times, tokens, prices and
verdicts: the material of the invariant suite and of the money regression tests.

`flat_run(...)` builds one complete `Trace` (model call, tool call and step per step,
then `run_end`), reduced to a `RunRecord` by the report's own reader
(`record_from_trace`), so every view sees what it would see from a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from looplab.report.data.records import RunRecord, record_from_trace
from looplab.traces.identity import Clock, Replies, run_identity
from looplab.traces.io import Trace
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
    TraceHeader,
)

__all__ = ["RunSpec", "flat_run"]

PROFILES = {
    "slow-80": (80.0, "openai-gpt-5.4-standard"),
    "fast-750": (750.0, "openai-gpt-5.4-codex-fast"),
    "mid-300": (300.0, None),
}
"""Profile name -> (decode rate, price entry or None: unpriced)."""


@dataclass(frozen=True)
class RunSpec:
    """One run to build: who, what, where, and how long each step's parts take."""

    agent: str
    task: str
    """`set/name` (the task set is the part before `/`)."""
    profile: str
    repetition: int = 0
    clock: Clock = "wall"
    model_s: float = 1.0
    """Model time per step."""
    tool_s: float = 0.5
    """Tool time per step."""
    steps: int = 2
    completion_tokens: int = 100
    success: bool | None = True
    price: str | None = "default"
    """The price entry the profile names; `default` takes `PROFILES`'s."""
    source: str = "looplab"
    """The trace's source (`looplab`, `wrap`, `import:claude_code`, ...)."""
    replies: Replies | None = None
    """Where the replies came from (`recording`, `simulator`, `upstream`; identity)."""


def flat_run(spec: RunSpec) -> RunRecord:
    """The record of one built run (see the module doc)."""
    rate, default_price = PROFILES[spec.profile]
    price = default_price if spec.price == "default" else spec.price
    run_id = f"{spec.agent}-{spec.task.replace('/', '-')}-{spec.profile}-r{spec.repetition}"
    profile: dict[str, object] = {"name": spec.profile, "decode_tps": rate}
    if price is not None:
        profile["price"] = price
    header = TraceHeader(
        run_id=run_id,
        created=datetime(2026, 1, 1, tzinfo=UTC),
        experiment="flat",
        cell={"backend": spec.profile, "task": spec.task, "repetition": spec.repetition},
        task=spec.task,
        agent=spec.agent,
        profile=profile,
        source=spec.source,
        clock=spec.clock,
        identity=run_identity(
            agent=spec.agent,
            task=spec.task,
            tasks=spec.source if spec.source.startswith("import:") else None,
            profile=spec.profile,
            decode_tps=rate,
            clock=spec.clock,
            replies=spec.replies,
        ),
    )
    events: list[TraceEvent] = [RunStartEvent(run_id=run_id, start=0.0, end=0.0, task=spec.task)]
    t = 0.0
    for step in range(spec.steps):
        start = t
        t += spec.model_s
        events.append(
            ModelCallEvent(
                run_id=run_id,
                step=step,
                start=start,
                end=t,
                sent=start,
                first_token=start + spec.model_s / 4,
                last_token=t,
                prompt_tokens=1000,
                completion_tokens=spec.completion_tokens,
            )
        )
        events.append(
            ToolCallEvent(
                run_id=run_id,
                step=step,
                start=t,
                end=t + spec.tool_s,
                name="run_tests",
                arguments="{}",
                ok=True,
                exit_code=0,
                output="ok",
                output_chars=2,
            )
        )
        t += spec.tool_s
        events.append(
            StepEvent(
                run_id=run_id,
                step=step,
                start=start,
                end=t,
                model_s=spec.model_s,
                tool_s=spec.tool_s,
                overhead_s=0.0,
            )
        )
    events.append(
        RunEndEvent(
            run_id=run_id,
            start=0.0,
            end=t,
            end_reason="finish",
            success=spec.success,
            steps=spec.steps,
        )
    )
    return record_from_trace(Trace(header=header, events=events), "flat")
