"""Live replay: a recorded run re-run at another profile, its tools executed again.

The recorded assistant messages are served by the simulator's `replay` policy at the new
profile while the agent re-runs the tools in a fresh sandbox. A tool result that differs
in a way that matters (ok vs error, tests passing vs failing), or a step that no longer
applies, is a divergence, reported with its step. The virtual half (re-timing from token
counts, nothing executed) is `looplab.analysis.replay`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from looplab.analysis.divergence import LIVE_REPLAY_NOTE, OutcomeDivergence, find_divergences
from looplab.analysis.replay import replayed_cell
from looplab.analysis.retime import annotate_reasoning
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.policies.replay import RecordedReply, ReplayPolicy
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.clock import utc_now
from looplab.errors import ConfigError
from looplab.latency.profile import LatencyProfile
from looplab.sandbox_contract import SandboxConfig
from looplab.traces.assembly.axis import RunAxis
from looplab.traces.assembly.builder import EventBuilder
from looplab.traces.identity import retimed
from looplab.traces.io import Trace
from looplab.traces.schema import TraceEvent

__all__ = ["LiveReplay", "replay_live"]


@dataclass
class LiveReplay:
    """A live replay's new trace and its divergences from the recording."""

    trace: Trace
    divergences: list[OutcomeDivergence] = field(default_factory=list)


async def replay_live(
    trace: Trace, profile: LatencyProfile, sandbox: SandboxConfig | None = None
) -> LiveReplay:
    """Re-run `trace`'s task with its recorded replies served at `profile`.

    Raises:
        ConfigError: the trace is not a looplab run of a bundled task.
    """
    # the agents extra (langgraph) is imported only when a live replay runs
    from looplab.agents.runner import run_task
    from looplab.experiments.record import run_events
    from looplab.tasks import load_task

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
        recorded = annotate_reasoning(recorded, server.simulator.phases)
    events: list[TraceEvent] = [
        EventBuilder(run_id, RunAxis(None, origin_wall)).run_start(task=task_id),
        *recorded,
    ]
    header = trace.header.model_copy(
        update={
            "run_id": run_id,
            "created": utc_now(),
            "source": "looplab",
            "source_path": str(trace.path) if trace.path else None,
            "profile": profile.model_dump(mode="json", by_alias=True),
            "cell": replayed_cell(trace.header.cell, profile),
            "identity": retimed(
                trace.header, profile.name, profile.decode_tps, "wall", "recording"
            ),
            "clock": "wall",
            "notes": [*trace.header.notes, f"{LIVE_REPLAY_NOTE}{trace.header.run_id}"],
        }
    )
    replayed = Trace(header=header, events=events)
    return LiveReplay(replayed, find_divergences(trace, replayed))
