"""Replay: re-time a recorded run virtually, or re-run it live at another speed.

- virtual: nothing is executed. Every model call is recomputed from the new profile and
  the call's recorded token counts; tool and harness time stay as recorded.
- live: the recorded assistant messages are served by the simulator's `replay` policy at
  the new profile while the agent re-runs the tools in a fresh sandbox. A tool result
  that differs in a way that matters (ok vs error, tests passing vs failing), or a step
  that no longer applies, is a divergence, reported with its step.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from looplab.analysis.retime import annotate_reasoning, profile_model_timing, retime_events
from looplab.backends.client import EndpointConfig, InstrumentedClient
from looplab.backends.inprocess import SimulatorServer
from looplab.backends.policies.replay import RecordedReply, ReplayPolicy
from looplab.backends.profile import LatencyProfile
from looplab.clock import utc_now
from looplab.errors import ConfigError
from looplab.sandbox import SandboxConfig
from looplab.traces.inputs import load_traces
from looplab.traces.io import Trace
from looplab.traces.schema import RunEndEvent, RunStartEvent, ToolCallEvent, TraceEvent

__all__ = ["Divergence", "LiveReplay", "load_traces", "replay_live", "replay_virtual"]


def replay_virtual(trace: Trace, profile: LatencyProfile) -> Trace:
    """`trace` re-timed at `profile` (a new trace; the original is untouched)."""
    note = f"virtual replay at profile {profile.name}: from recorded token counts"
    events = retime_events(trace.events, profile_model_timing(profile), note)
    header = trace.header.model_copy(
        update={
            "run_id": f"{trace.header.run_id}.replay-{uuid.uuid4().hex[:6]}",
            "created": utc_now(),
            "source": f"replay:{trace.header.source}",
            "source_path": str(trace.path) if trace.path else None,
            "profile": profile.model_dump(mode="json", by_alias=True),
            "clock": "virtual",
            "notes": [*trace.header.notes, note],
        }
    )
    for index, event in enumerate(events):
        events[index] = event.model_copy(update={"run_id": header.run_id})
    return Trace(header=header, events=events)


@dataclass(frozen=True)
class Divergence:
    """Where a live replay stopped matching its recording."""

    step: int
    tool: str
    recorded: str
    replayed: str


@dataclass
class LiveReplay:
    """A live replay's new trace and its divergences from the recording."""

    trace: Trace
    divergences: list[Divergence] = field(default_factory=list)


async def replay_live(
    trace: Trace, profile: LatencyProfile, sandbox: SandboxConfig | None = None
) -> LiveReplay:
    """Re-run `trace`'s task with its recorded replies served at `profile`.

    Raises:
        ConfigError: the trace is not a looplab run of a bundled task.
    """
    # the agents extra (langgraph) is needed here only: virtual replay runs without it
    from looplab.agents.runner import run_task
    from looplab.agents.taskset import load_task
    from looplab.experiments.record import run_events

    task_id = trace.header.task
    if not trace.header.source.startswith("looplab") or task_id is None:
        raise ConfigError(
            f"live replay needs a looplab run of a bundled task; this trace is "
            f"{trace.header.source!r} (task {task_id!r}); use --mode virtual",
            field="--mode",
            allowed=["virtual"],
        )
    task = load_task(task_id)
    replies = [
        RecordedReply(call.message or {"role": "assistant", "content": ""}, call.reasoning_tokens)
        for call in trace.model_calls()
    ]
    run_id = f"{trace.header.run_id}.live-{uuid.uuid4().hex[:6]}"
    async with SimulatorServer(profile) as server:
        policy = server.simulator.policies["looplab-replay"]
        assert isinstance(policy, ReplayPolicy)
        policy.load(replies, trace.end.prompt if trace.end else None)
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-replay")
        origin_wall = utc_now()
        async with InstrumentedClient(endpoint) as client:
            run = await run_task(task, client, sandbox_config=sandbox)
        recorded = run_events(
            run_id, run, origin_wall=origin_wall, model=endpoint.model, profile=profile.name
        )
        recorded = annotate_reasoning(recorded, server.simulator.timings)
    events: list[TraceEvent] = [
        RunStartEvent(run_id=run_id, wall_time=origin_wall, start=0.0, end=0.0, task=task_id),
        *recorded,
    ]
    header = trace.header.model_copy(
        update={
            "run_id": run_id,
            "created": utc_now(),
            "source": "looplab",
            "source_path": str(trace.path) if trace.path else None,
            "profile": profile.model_dump(mode="json", by_alias=True),
            "clock": "wall",
            "notes": [*trace.header.notes, f"live replay of {trace.header.run_id}"],
        }
    )
    replayed = Trace(header=header, events=events)
    return LiveReplay(replayed, find_divergences(trace, replayed))


def find_divergences(recorded: Trace, replayed: Trace) -> list[Divergence]:
    """Tool results that differ in a way that matters, and steps that no longer apply."""
    out: list[Divergence] = []
    by_step: dict[tuple[int, int], ToolCallEvent] = {}
    for position, call in _positions(replayed.tool_calls()):
        by_step[position] = call
    for position, call in _positions(recorded.tool_calls()):
        step = call.step or 0
        again = by_step.get(position)
        if again is None:
            out.append(Divergence(step, call.name, _verdict(call), "step not reached"))
            continue
        if _verdict(call) != _verdict(again):
            out.append(Divergence(step, call.name, _verdict(call), _verdict(again)))
    end_recorded, end_replayed = recorded.end, replayed.end
    if (
        isinstance(end_recorded, RunEndEvent)
        and isinstance(end_replayed, RunEndEvent)
        and end_recorded.success != end_replayed.success
    ):
        out.append(
            Divergence(
                end_replayed.steps,
                "check",
                f"success={end_recorded.success}",
                f"success={end_replayed.success}",
            )
        )
    return out


def _positions(calls: Sequence[ToolCallEvent]) -> list[tuple[tuple[int, int], ToolCallEvent]]:
    seen: dict[int, int] = {}
    out = []
    for call in calls:
        step = call.step or 0
        index = seen.get(step, 0)
        seen[step] = index + 1
        out.append(((step, index), call))
    return out


def _verdict(call: ToolCallEvent) -> str:
    """What matters about a tool result: ok/error, and pass/fail for test runs."""
    head = (call.output or "").strip().splitlines()[:1]
    first = head[0] if head else ""
    if call.name == "run_tests":
        return "tests pass" if first.startswith("PASSED") else "tests fail"
    return "ok" if call.ok else f"error: {(call.error or first)[:80]}"


def default_output(inputs: Sequence[Path]) -> Path:
    """Where replays go when no -o is given."""
    return Path("runs") / "replays" / (inputs[0].stem if inputs else "replay")
