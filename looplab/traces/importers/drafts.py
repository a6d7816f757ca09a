"""Drafts: what an importer recovered about a run, with absolute times, before `build_run`.

An importer reads its format into a `RunDraft`: steps of one model call plus the tool calls
(and sandbox operations) it led to, every time an absolute epoch second (`None` where the
source had none), every derived value named in the draft's `estimated` with how. The step
items are the trace builder's own (`looplab.traces.assembly.items`), re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from looplab.traces.assembly.items import ModelDraft, SandboxDraft, StepDraft, ToolDraft
from looplab.traces.end_reason import EndReasonValue

__all__ = ["ModelDraft", "RunDraft", "SandboxDraft", "StepDraft", "SubRunDraft", "ToolDraft"]


@dataclass
class SubRunDraft:
    """A sub-run the source kept (a sub-agent's own conversation): its steps, on the same
    clock as the run's, and where it hangs in the run tree (`schema.SubRunEvent`)."""

    id: str
    steps: list[StepDraft] = field(default_factory=list)
    parent: str | None = None
    parent_step: int | None = None
    join_step: int | None = None
    spawn_call_id: str | None = None
    agent: str | None = None
    description: str | None = None


@dataclass
class RunDraft:
    """Everything an importer recovered about one run, before it is put on the run axis."""

    fmt: str
    run_id: str
    """The source's own id of the run (instance id, session id, file stem); `build_run`
    appends a digest of the source so that runs of different files never share an id."""
    source_path: Path
    source_key: str = ""
    """Which run of the file this is (a session id, a line), for files holding several."""
    source_digest: str | None = None
    """The source's identity when it is not a file (`looplab collect`: the trace id);
    None: the digest of `source_path`'s bytes."""
    steps: list[StepDraft] = field(default_factory=list)
    task: str | None = None
    agent: str | None = None
    model: str | None = None
    prompt: str | None = None
    created: datetime | None = None
    end_reason: EndReasonValue | None = None
    success: bool | None = None
    verdict_by: str = "harness"
    """Who decided `success` when set: `harness` (the record's own verdict), `span` (a
    collected run's attribute or agent span status)."""
    error: str | None = None
    check_output: str | None = None
    sandbox_start_s: float | None = None
    sandbox_start_how: str | None = None
    sandbox: dict[str, Any] = field(default_factory=dict)
    backend: dict[str, Any] = field(default_factory=dict)
    """What the source says of the serving side (the header's `backend`): a telemetry
    source's speed tier (`speed`: Claude Code's fast mode)."""
    end_time: float | None = None
    absent: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    model_timing: str = "absent"
    """How model times were obtained: `measured: ...`, `estimated: ...` or `absent`."""
    tool_timing: str = "absent"
    """How tool times were obtained, in the same form."""
    subruns: list[SubRunDraft] = field(default_factory=list)
    """Sub-runs (sub-agents) the source kept, each becoming a `subrun` event and events
    tagged with its id (looplab-2)."""
