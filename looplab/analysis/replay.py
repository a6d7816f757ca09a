"""Virtual replay: a recorded run re-timed at another profile, nothing executed.

Every model call is recomputed from the new profile and the call's recorded token counts;
tool and harness time stay as recorded. A run tree (sub-runs) is re-timed along its
critical path. The live half (recorded replies served while the tools re-run in a
sandbox) is `looplab.experiments.replay_live`, above the agents and sandboxes it needs.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path

from looplab.analysis.placement import retime_tree
from looplab.analysis.retime import profile_model_timing, retime_events
from looplab.clock import utc_now
from looplab.config import replaced
from looplab.latency.profile import LatencyProfile
from looplab.traces.cell import TraceCell
from looplab.traces.identity import retimed
from looplab.traces.io import Trace

__all__ = ["default_output", "replay_virtual", "replayed_cell"]


def replay_virtual(trace: Trace, profile: LatencyProfile) -> Trace:
    """`trace` re-timed at `profile` (a new trace; the original is untouched)."""
    note = f"virtual replay at profile {profile.name}: from recorded token counts"
    timing = profile_model_timing(profile)
    if any(e.subrun is not None for e in trace.events):  # a run tree: its critical path
        events = retime_tree(trace.events, timing, note)
    else:
        events = retime_events(trace.events, timing, note)
    header = trace.header.model_copy(
        update={
            "run_id": f"{trace.header.run_id}.replay-{uuid.uuid4().hex[:6]}",
            "created": utc_now(),
            "source": f"replay:{trace.header.source}",
            "source_path": str(trace.path) if trace.path else None,
            "profile": profile.model_dump(mode="json", by_alias=True),
            "cell": replayed_cell(trace.header.cell, profile),
            "identity": retimed(trace.header, profile.name, profile.decode_tps, "virtual"),
            "clock": "virtual",
            "notes": [*trace.header.notes, note],
        }
    )
    for index, event in enumerate(events):
        events[index] = event.model_copy(update={"run_id": header.run_id})
    return Trace(header=header, events=events)


def replayed_cell(cell: TraceCell, profile: LatencyProfile) -> TraceCell:
    """The cell of a replay (virtual or live) at `profile`: its `backend` is the profile it
    ran at (the original's is kept as `replayed_from`); a cell without one is kept."""
    if cell.backend is None:
        return cell
    return replaced(cell, backend=profile.name, replayed_from=cell.backend)


def default_output(inputs: Sequence[Path]) -> Path:
    """Where replays (either mode) go when no -o is given."""
    return Path("runs") / "replays" / (inputs[0].stem if inputs else "replay")
