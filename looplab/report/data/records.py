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
from looplab.errors import TraceError
from looplab.traces.identity import RunIdentity, identity_of
from looplab.traces.inputs import read_traces
from looplab.traces.io import Trace
from looplab.traces.schema import ModelCallEvent, RunStartEvent, ToolCallEvent

__all__ = ["Bar", "RunRecord", "load_runs", "record_from_trace"]

_FAMILY = re.compile(r"^(?P<base>.+/.+)-(?P<size>\d+)$")


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar of a run's timeline (seconds on the run axis)."""

    lane: str
    """`model` or `tools`, `tools 2`, ... (parallel tool calls get their own lanes)."""
    kind: str
    """`queue`, `ttft` (TTFT + prefill), `reasoning` (hidden reasoning decode), `decode`
    (visible), `model` (unsplit), `tool`; a browser action split into its phases is
    `act`, `page_wait` and `observe` bars instead of one `tool` bar."""
    start: float
    end: float
    label: str
    estimated: bool = False
    tool: str = ""
    """The tool's name (tool bars)."""


TOOL_BAR_KINDS = ("tool", "act", "page_wait", "observe")
"""Bar kinds that are (parts of) tool calls."""
_PHASE_LABELS = {"act": "action", "page_wait": "page-load wait", "observe": "observation"}


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
    end_reason: str
    steps: int
    task_s: float
    model_s: float
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
    identity: RunIdentity | None = None
    """What it is compared by (agent, task set, profile, clock: `traces/identity.py`);
    `report/data/pairing.py` groups by it. None only for records built by hand."""
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


def load_runs(inputs: list[Path]) -> list[RunRecord]:
    """Every complete run of every input (incomplete ones are not counted; see runner.py).

    Raises:
        ConfigError: an input without traces.
        TraceError: a file that is not a looplab trace.
    """
    records: list[RunRecord] = []
    for path in inputs:
        name = path.resolve().name if path.is_dir() else path.stem
        for trace in read_traces(path, flag="RUN_DIR"):
            if trace.complete:
                records.append(record_from_trace(trace, name))
    return records


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
    ttfts = [t for t in (c.ttft_s for c in calls) if t is not None]
    decodes = [d for d in (c.decode_s for c in calls) if d is not None]
    task_s = end.end
    model_s = sum(s.model_s for s in steps) if steps else (end.model_s or 0.0)
    tool_s = sum(s.tool_s for s in steps) if steps else (end.tool_s or 0.0)
    start = trace.events[0] if trace.events else None
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
        steps=end.steps,
        task_s=task_s,
        model_s=model_s,
        tool_s=tool_s,
        overhead_s=max(0.0, task_s - model_s - tool_s),
        ttft_s=sum(ttfts) if len(ttfts) == len(calls) and calls else None,
        reasoning_s=sum(c.reasoning_s or 0.0 for c in calls if c.first_token is not None),
        decode_s=sum(decodes) if len(decodes) == len(calls) and calls else None,
        sandbox_start_s=sandbox,
        step_ends=[s.end for s in steps],
        ttfts=ttfts,
        decodes=decodes,
        tool_times=[t.duration_s for t in tools if t.name != "finish"],
        bars=_bars(calls, tools, _computed(header.clock)),
        estimated=estimated,
        absent=list(header.absent),
        notes=list(header.notes),
        trace=trace,
        group=profile,
        node=_node_label(header.node),
        identity=identity,
        model=identity.model,
        exit_code=end.exit_code,
        verdict_by=end.verdict_by,
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
    computed = _computed(trace.header.clock)
    for event in trace.events:
        if not event.estimated:
            continue
        if isinstance(event, ModelCallEvent):
            guessed = set(event.estimated) - computed
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


def _computed(clock: str) -> set[str]:
    """Model-call fields a virtual clock computes from the latency profile: not measured,
    but not guessed either (no importer estimate), so not drawn as estimated."""
    return {"ttft_s", "decode_s", "reasoning_s"} if clock == "virtual" else set()


def _bars(calls: list[ModelCallEvent], tools: list[ToolCallEvent], computed: set[str]) -> list[Bar]:
    bars: list[Bar] = []
    for call in calls:
        label = f"step {call.step}"
        if call.purpose in ("planner", "reflection"):
            label += f" {call.purpose}"
        guessed = set(call.estimated) - computed
        estimated = bool(guessed)
        if call.sent is not None and call.first_token is not None and call.last_token is not None:
            if call.sent - call.start > 1e-4:
                bars.append(Bar("model", "queue", call.start, call.sent, f"{label} client queue"))
            first_any = call.first_token - (call.reasoning_s or 0.0)
            bars.append(
                Bar(
                    "model",
                    "ttft",
                    call.sent,
                    first_any,
                    f"{label} TTFT + prefill",
                    "ttft_s" in guessed,
                )
            )
            if call.reasoning_s:
                text = f"{label} reasoning (hidden), {call.reasoning_tokens} tokens"
                estimated = "reasoning_s" in guessed
                bars.append(Bar("model", "reasoning", first_any, call.first_token, text, estimated))
            tokens = call.completion_tokens
            text = f"{label} decode" + (f", {tokens} tokens" if tokens is not None else "")
            bars.append(
                Bar(
                    "model",
                    "decode",
                    call.first_token,
                    call.last_token,
                    text,
                    "decode_s" in guessed,
                )
            )
        else:
            bars.append(
                Bar("model", "model", call.start, call.end, f"{label} model call", estimated)
            )
    lane_ends: list[float] = []
    for tool in sorted(tools, key=lambda t: t.start):
        lane = next((i for i, e in enumerate(lane_ends) if e <= tool.start + 1e-9), None)
        if lane is None:
            lane = len(lane_ends)
            lane_ends.append(tool.end)
        lane_ends[lane] = tool.end
        name = "tools" if lane == 0 else f"tools {lane + 1}"
        bars.extend(_tool_bars(name, tool))
    return bars


def _tool_bars(lane: str, tool: ToolCallEvent) -> list[Bar]:
    """A tool call's bar, or its browser phases in order (action, page-load wait,
    observation) when it split its time."""
    label = f"step {tool.step} {tool.name}"
    split = [(k, tool.phases[k]) for k in _PHASE_LABELS if tool.phases.get(k)]
    if not split:
        return [Bar(lane, "tool", tool.start, tool.end, label, bool(tool.estimated), tool.name)]
    bars: list[Bar] = []
    at = tool.start
    scale = min(1.0, (tool.end - tool.start) / sum(s for _, s in split))
    for kind, seconds in split:
        end = min(tool.end, at + seconds * scale)
        text = f"{label} {_PHASE_LABELS[kind]}"
        bars.append(Bar(lane, kind, at, end, text, bool(tool.estimated), tool.name))
        at = end
    return bars


def _node_label(node: dict[str, object]) -> str:
    """`host (ray node abcd1234)` from a trace header's `node`; "" when none is recorded."""
    host = str(node.get("hostname") or "")
    ray_id = str(node.get("ray_node_id") or "")
    return f"{host} (ray node {ray_id[:8]})" if ray_id else host
