"""Run records: what a report needs from each trace, extracted once.

A report input is an experiment directory (`traces/*.jsonl`, as `looplab run` writes it),
a directory of traces (as `looplab import` writes it), or one trace file. Traces are the
source of truth (the DuckDB index next to them can lag behind a resumed run, and imported
directories have none), and reading them is fast: about 0.1-0.5 ms per run.

Estimated values (imported traces: an event's `estimated`, the header's `absent`) are
carried as the set `RunRecord.estimated` of the quantities they affect (`model`, `tool`,
`ttft`, `reasoning`, `decode`), so every view can mark them. A virtual clock's model
times are computed from the latency profile, not guessed: they are not in that set (the
report badges such runs "virtual clock" instead, from `RunRecord.clock`).

A model call's phases follow the trace schema: TTFT + prefill (`ttft`), hidden reasoning
decode (`reasoning`, when the trace knows it), visible decode (`decode`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from looplab.analysis.outcomes import Outcome, outcome_of
from looplab.analysis.pathsplit import keep_recorded, path_split
from looplab.errors import TraceError
from looplab.report.data.bars import TOOL_BAR_KINDS, Bar, computed, run_bars
from looplab.report.data.lanes import SubRunLane, subrun_lanes
from looplab.traces.end_reason import EndReasonValue
from looplab.traces.identity import RunIdentity, identity_of
from looplab.traces.inputs import SetAside, read_traces
from looplab.traces.io import Trace
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    StepEvent,
    ToolCallEvent,
)

__all__ = ["TOOL_BAR_KINDS", "Bar", "RunRecord", "load_runs", "record_from_trace"]

_FAMILY = re.compile(r"^(?P<base>.+/.+)-(?P<size>\d+)$")


@dataclass(slots=True)
class RunRecord:
    """One run, reduced to the numbers the views use."""

    run_id: str
    input_name: str
    """Which report input it came from (directory or file name)."""
    experiment: str
    profile: str
    """Backend / profile label (backend name, profile name, or the import source)."""
    decode_tps: float | None
    profile_spec: dict[str, object] | None
    task: str
    family: str | None
    size: int | None
    agent: str
    source: str
    clock: str
    complete: bool
    success: bool | None
    end_reason: EndReasonValue
    steps: int
    """Steps of the main agent (the top-level run); a sub-agent's steps are in
    `model_calls` and the run tree."""
    task_s: float
    model_s: float
    """Model time on the critical path (a flat run: every call's); with `tool_s` and
    `overhead_s` it sums to `task_s` (`analysis.pathsplit`)."""
    tool_s: float
    overhead_s: float
    ttft_s: float | None
    """Sum of TTFTs, to the first token of any kind (None when the source had no
    first-token times)."""
    reasoning_s: float
    """Sum of the calls' known hidden reasoning decode times (0 when none is known)."""
    decode_s: float | None
    sandbox_start_s: float | None
    step_ends: list[float]
    """Cumulative time at the end of each step."""
    ttfts: list[float]
    decodes: list[float]
    tool_times: list[float]
    bars: list[Bar]
    estimated: set[str] = field(default_factory=set)
    absent: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    trace: Trace | None = None
    group: str = ""
    """The label the report groups it under (set by the report; `profile` by default)."""
    node: str = ""
    """Where it ran (the header's `node`: host, Ray node); "" when not recorded."""
    subruns: list[SubRunLane] = field(default_factory=list)
    """Its sub-runs' lane groups in tree order (empty: a flat run; `data/lanes.py`)."""
    identity: RunIdentity | None = None
    """What it is compared by (agent, task set, profile, clock: `traces/identity.py`);
    `report/data/pairing.py` groups by it. None only for records built by hand."""
    work_s: float | None = None
    """Total work of a run with sub-agents: every run's own time summed over parallel
    branches (its own figure, never a share of `task_s`); None for a flat run."""
    model_calls: int = 0
    """Model calls of every agent (main and sub-agents)."""
    model: str | None = None
    """The model the run talked to (the identity's; None: unknown)."""
    exit_code: int | None = None
    """A wrapped agent's exit status (`run_end.exit_code`; None: not a command)."""
    verdict_by: str | None = None
    """Who decided `success` (`run_end.verdict_by`: check, check command, exit code, span,
    harness; None: not recorded)."""

    @property
    def outcome(self) -> Outcome:
        """`solved`, `failed` or `unknown` (`looplab.analysis.outcomes`): a stop, a non-zero
        exit or a failed verdict is failed; no verdict is unknown, never solved."""
        return outcome_of(self.end_reason, self.success, self.exit_code)

    @property
    def anchor(self) -> str:
        """HTML id of the run's timeline."""
        return "run-" + re.sub(r"[^A-Za-z0-9_-]", "_", self.run_id)


def load_runs(inputs: list[Path], set_aside: list[SetAside] | None = None) -> list[RunRecord]:
    """Every complete run of every input (incomplete ones are not counted; see runner.py);
    the traces not counted (unreadable, or without their `run_end`) go to `set_aside`.

    Raises:
        ConfigError: an input without traces.
        TraceError: a file that is not a looplab trace.
    """
    records: list[RunRecord] = []
    for path in inputs:
        name = path.resolve().name if path.is_dir() else path.stem
        for trace in read_traces(path, flag="RUN_DIR", set_aside=set_aside):
            if trace.complete:
                records.append(record_from_trace(trace, name))
            elif set_aside is not None:
                where = str(trace.path) if trace.path is not None else trace.header.run_id
                set_aside.append(SetAside(where, _UNENDED))
    return records


_UNENDED = "the run has not ended (no run_end event): in progress, or cut off"


def record_from_trace(trace: Trace, input_name: str) -> RunRecord:
    """Reduce one complete trace to a `RunRecord`.

    Raises:
        TraceError: the trace has no `run_end` yet (a run in progress, or one cut off).
    """
    header = trace.header
    end = trace.end
    if end is None:
        where = str(trace.path) if trace.path is not None else None
        raise TraceError("the run has not ended (no run_end event yet)", path=where)
    spec = header.profile
    identity = _with_rate(identity_of(header))
    profile = identity.profile or (header.source if header.source != "looplab" else "unknown")
    decode_tps = identity.decode_tps
    task = header.task or "?"
    match = _FAMILY.match(task) if header.source == "looplab" else None
    steps = trace.steps()
    calls = trace.model_calls()
    tools = trace.tool_calls()
    estimated = _estimated(trace)
    times = _times(trace, end, steps, calls)
    task_s, model_s, tool_s = end.end, times.model_s, times.tool_s
    start = trace.events[0] if trace.events else None
    subruns = subrun_lanes(trace.events)
    sandbox = end.sandbox_start_s
    if sandbox is None and isinstance(start, RunStartEvent):
        sandbox = start.sandbox_start_s
    return RunRecord(
        run_id=header.run_id,
        input_name=input_name,
        experiment=header.experiment or input_name,
        profile=profile,
        decode_tps=decode_tps,
        profile_spec=spec,
        task=task,
        family=f"{match['base']}-N" if match else None,
        size=int(match["size"]) if match else None,
        agent=header.agent or "?",
        source=header.source,
        clock=header.clock,
        complete=True,
        success=end.success,
        end_reason=end.end_reason,
        steps=sum(1 for s in steps if s.subrun is None) if times.structured else end.steps,
        task_s=task_s,
        model_s=model_s,
        tool_s=tool_s,
        overhead_s=max(0.0, task_s - model_s - tool_s),
        ttft_s=times.ttft_s,
        reasoning_s=times.reasoning_s,
        decode_s=times.decode_s,
        sandbox_start_s=sandbox,
        step_ends=[s.end for s in steps],
        ttfts=times.ttfts,
        decodes=times.decodes,
        tool_times=[t.duration_s for t in tools if t.name != "finish"],
        bars=run_bars(calls, tools, computed(header.clock), subruns),
        estimated=estimated,
        absent=list(header.absent),
        notes=list(header.notes),
        trace=trace,
        group=profile,
        node=_node_label(header.node),
        subruns=subruns,
        identity=identity,
        work_s=times.work_s,
        model_calls=len(calls),
        model=identity.model,
        exit_code=end.exit_code,
        verdict_by=end.verdict_by,
    )


@dataclass
class _Times:
    """Where one run's time went (the critical path's split for a run with sub-runs)."""

    model_s: float
    tool_s: float
    ttft_s: float | None
    decode_s: float | None
    reasoning_s: float
    ttfts: list[float]
    decodes: list[float]
    work_s: float | None
    structured: bool


def _times(
    trace: Trace, end: RunEndEvent, steps: list[StepEvent], calls: list[ModelCallEvent]
) -> _Times:
    """The run's model, tool, TTFT, decode and reasoning time; with sub-runs, what is on
    its critical path, scaled to the recorded task time, and total work beside it."""
    task_s = end.end
    ttfts = [t for t in (c.ttft_s for c in calls) if t is not None]
    decodes = [d for d in (c.decode_s for c in calls) if d is not None]
    model_s = sum(s.model_s for s in steps) if steps else (end.model_s or 0.0)
    tool_s = sum(s.tool_s for s in steps) if steps else (end.tool_s or 0.0)
    ttft_sum = sum(ttfts) if len(ttfts) == len(calls) and calls else None
    decode_sum = sum(decodes) if len(decodes) == len(calls) and calls else None
    reasoning_sum = sum(c.reasoning_s or 0.0 for c in calls if c.first_token is not None)
    work_s: float | None = None
    structured = any(e.subrun is not None for e in trace.events)
    if structured:  # on the critical path
        split = path_split(trace.events, keep_recorded)
        scale = task_s / split.task_s if split.task_s > 0 else 0.0
        on = split.path
        model_s, tool_s, work_s = on.model_s * scale, on.tool_s * scale, split.work.total_s
        reasoning_sum = on.reasoning_s * scale
        ttft_sum = on.ttft_s * scale if ttft_sum is not None else None
        decode_sum = on.decode_s * scale if decode_sum is not None else None
    return _Times(
        model_s, tool_s, ttft_sum, decode_sum, reasoning_sum, ttfts, decodes, work_s, structured
    )


def _with_rate(identity: RunIdentity) -> RunIdentity:
    """`identity` with its profile's decode rate looked up among the presets when the trace
    names a preset without its rate (`looplab import -p fast-750`, `collect -p`)."""
    if identity.profile is None or identity.decode_tps is not None:
        return identity
    from looplab.latency.presets import presets

    preset = presets().get(identity.profile)
    if preset is None:
        return identity
    return identity.model_copy(update={"decode_tps": preset.decode_tps})


def _estimated(trace: Trace) -> set[str]:
    """The quantities an importer estimated (`model`, `tool`, `ttft`, `decode`,
    `reasoning`, ...), from the events' `estimated` and the header's `absent`."""
    estimated: set[str] = set()
    computed_kinds = computed(trace.header.clock)
    for event in trace.events:
        if not event.estimated:
            continue
        if isinstance(event, ModelCallEvent):
            guessed = set(event.estimated) - computed_kinds
            if guessed:
                estimated.add("model")
            for key in ("ttft", "decode", "reasoning"):
                if f"{key}_s" in guessed:
                    estimated.add(key)
        elif isinstance(event, ToolCallEvent):
            estimated.add("tool")
        elif hasattr(event, "model_s"):
            estimated.update(k.removesuffix("_s") for k in event.estimated if k.endswith("_s"))
    for absent in trace.header.absent:
        if absent.startswith("model_call."):
            estimated.add("model")
        elif absent.startswith("tool_call."):
            estimated.add("tool")
    return estimated


def _node_label(node: dict[str, object]) -> str:
    """`host (ray node abcd1234)` from a trace header's `node`; "" when none is recorded."""
    host = str(node.get("hostname") or "")
    ray_id = str(node.get("ray_node_id") or "")
    return f"{host} (ray node {ray_id[:8]})" if ray_id else host
