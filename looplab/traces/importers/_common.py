"""What every importer shares: drafts with absolute times, and the step that makes events.

An importer reads its format into a `RunDraft`: steps of one model call plus the tool calls
(and sandbox operations) it led to, every time an absolute epoch second (`None` where the
source had none), every derived value named in the draft's `estimated` with how.
`build_run` then puts the drafts on the run's axis (zero = the first model call's start),
computes the step splits and the run totals, fills the header's `absent`, and writes the
`ImportReport` that says what was recovered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    SandboxOpEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
    TraceHeader,
)

__all__ = [
    "OUTPUT_LIMIT",
    "ImportReport",
    "ImportedRun",
    "ModelDraft",
    "RunDraft",
    "SandboxDraft",
    "StepDraft",
    "ToolDraft",
    "build_run",
    "cut",
    "load_json",
    "obj",
    "parse_time",
    "safe_run_id",
]

OUTPUT_LIMIT = 64 * 1024
"""Tool outputs are cut to this many characters (the schema's contract)."""

_MISSING = "not in the source"
_PLACEHOLDER = f"{_MISSING}: placed at the previous known time, zero length"


@dataclass
class ModelDraft:
    """One model call with absolute times (epoch seconds) or None."""

    start: float | None = None
    end: float | None = None
    sent: float | None = None
    first_token: float | None = None
    last_token: float | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    finish_reason: str | None = None
    model: str | None = None
    request_id: str | None = None
    message: dict[str, Any] | None = None
    estimated: dict[str, str] = field(default_factory=dict)
    duration_measured: bool = False
    """True when end - start is a measured duration even if the placement is estimated."""


@dataclass
class ToolDraft:
    """One tool call with absolute times (epoch seconds) or None."""

    name: str
    start: float | None = None
    end: float | None = None
    call_id: str | None = None
    arguments: str = ""
    ok: bool | None = None
    exit_code: int | None = None
    error: str | None = None
    output: str | None = None
    output_chars: int | None = None
    estimated: dict[str, str] = field(default_factory=dict)
    duration_measured: bool = False
    """True when end - start is a measured duration even if the placement is estimated."""


@dataclass
class SandboxDraft:
    """One sandbox operation with absolute times (epoch seconds) or None."""

    op: str
    start: float | None = None
    end: float | None = None
    sandbox_id: str | None = None
    detail: str = ""
    estimated: dict[str, str] = field(default_factory=dict)


@dataclass
class StepDraft:
    """One model call and the tool calls / sandbox operations it led to."""

    model: ModelDraft | None = None
    tools: list[ToolDraft] = field(default_factory=list)
    sandbox: list[SandboxDraft] = field(default_factory=list)


@dataclass
class RunDraft:
    """Everything an importer recovered about one run, before it is put on the run axis."""

    fmt: str
    run_id: str
    source_path: Path
    steps: list[StepDraft] = field(default_factory=list)
    task: str | None = None
    agent: str | None = None
    model: str | None = None
    prompt: str | None = None
    created: datetime | None = None
    end_reason: str | None = None
    success: bool | None = None
    error: str | None = None
    check_output: str | None = None
    sandbox_start_s: float | None = None
    sandbox_start_how: str | None = None
    sandbox: dict[str, Any] = field(default_factory=dict)
    end_time: float | None = None
    absent: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    model_timing: str = "absent"
    """How model times were obtained: `measured: ...`, `estimated: ...` or `absent`."""
    tool_timing: str = "absent"
    """How tool times were obtained, in the same form."""


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
    end_reason: str
    success: bool | None
    absent: list[str]
    notes: list[str]

    def rows(self) -> list[tuple[str, str]]:
        """(what, value) pairs for a two-column table."""

        def opt(value: object) -> str:
            return "absent" if value is None else str(value)

        def secs(value: float | None) -> str:
            return "absent" if value is None else f"{value:.2f} s"

        return [
            ("source", f"{self.source_path} ({self.fmt})"),
            ("steps", str(self.steps)),
            ("model calls", str(self.model_calls)),
            ("tool calls", str(self.tool_calls)),
            ("sandbox operations", str(self.sandbox_ops)),
            ("prompt tokens", opt(self.prompt_tokens)),
            ("cached tokens", opt(self.cached_tokens)),
            ("completion tokens", opt(self.completion_tokens)),
            ("model time", f"{secs(self.model_s)} ({self.model_timing})"),
            ("tool time", f"{secs(self.tool_s)} ({self.tool_timing})"),
            ("end", f"{self.end_reason}, success={opt(self.success)}"),
            ("absent", ", ".join(self.absent) or "-"),
        ]


@dataclass
class ImportedRun:
    """One imported run: the trace's header and events, and what could be recovered."""

    header: TraceHeader
    events: list[TraceEvent]
    report: ImportReport


def load_json(path: Path) -> Any:
    """Parse a whole JSON file.

    Raises:
        TraceError: unreadable file or invalid JSON (with line and column).
    """
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(
            f"line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg})", path=str(path)
        ) from None


def read_text(path: Path) -> str:
    """The file's text.

    Raises:
        TraceError: missing, unreadable or not UTF-8.
    """
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"cannot read: {exc.strerror}", path=str(path)) from None
    except UnicodeDecodeError:
        raise TraceError("not a UTF-8 text file", path=str(path)) from None


def parse_time(value: Any, where: str, path: Path, *, naive_offset_s: float = 0.0) -> float:
    """Epoch seconds from an ISO 8601 string or an epoch number.

    Args:
        value: `2025-04-30T16:32:54.707474`, `...Z`, `...-04:00`, or seconds since the epoch.
        where: the record, for the error message (`history[3].timestamp`).
        path: the file, for the error message.
        naive_offset_s: seconds to subtract from a time without a zone (read as UTC).

    Raises:
        TraceError: not a time.
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if parsed.tzinfo is None:
                return parsed.replace(tzinfo=UTC).timestamp() - naive_offset_s
            return parsed.timestamp()
    raise TraceError(f"{where}: {value!r} is not a timestamp", path=str(path))


def is_naive_iso(value: Any) -> bool:
    """True for an ISO time string without a zone."""
    if not isinstance(value, str):
        return False
    try:
        return datetime.fromisoformat(value).tzinfo is None
    except ValueError:
        return False


def cut(text: str | None) -> str | None:
    """`text` cut to OUTPUT_LIMIT characters."""
    return None if text is None else text[:OUTPUT_LIMIT]


def safe_run_id(*parts: object) -> str:
    """A file-name-safe run id from the given parts."""
    text = "-".join(str(p) for p in parts if p not in (None, ""))
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._") or "run"


def obj(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int | None:
    """`value` as an int, None when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


# -- building events -----------------------------------------------------------------------


class _Axis:
    """Maps absolute times to the run axis; untimed items go to the last known time."""

    def __init__(self, origin: float | None) -> None:
        self.origin = origin
        self.cursor = 0.0

    def place(
        self, start: float | None, end: float | None, estimated: dict[str, str]
    ) -> tuple[float, float]:
        if start is None and end is None:
            estimated.setdefault("start", _PLACEHOLDER)
            estimated.setdefault("end", _PLACEHOLDER)
            return self.cursor, self.cursor
        if start is None:
            assert end is not None
            estimated.setdefault("start", f"{_MISSING}: taken equal to end (zero length)")
            start = end
        if end is None:
            estimated.setdefault("end", f"{_MISSING}: taken equal to start (zero length)")
            end = start
        base = self.origin or 0.0
        rel_start, rel_end = start - base, max(end, start) - base
        self.cursor = max(self.cursor, rel_end)
        return rel_start, rel_end

    def rel(self, value: float | None) -> float | None:
        if value is None:
            return None
        return value - (self.origin or 0.0)

    def wall(self, rel_start: float) -> datetime | None:
        if self.origin is None:
            return None
        return datetime.fromtimestamp(self.origin, UTC) + timedelta(seconds=rel_start)


def _union_outside(intervals: Iterable[tuple[float, float]], hole: tuple[float, float]) -> float:
    """Length of the union of `intervals` minus the part inside `hole`."""
    pieces: list[tuple[float, float]] = []
    for start, end in intervals:
        for a, b in ((start, min(end, hole[0])), (max(start, hole[1]), end)):
            if b > a:
                pieces.append((a, b))
    pieces.sort()
    total, cur_a, cur_b = 0.0, None, None
    for a, b in pieces:
        if cur_b is None or a > cur_b:
            if cur_a is not None and cur_b is not None:
                total += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_a is not None and cur_b is not None:
        total += cur_b - cur_a
    return total


def _origin(draft: RunDraft) -> float | None:
    for step in draft.steps:
        if step.model is not None and step.model.start is not None:
            return step.model.start
    times = [
        t
        for step in draft.steps
        for t in [
            *(x.start for x in step.tools),
            *(x.end for x in step.tools),
            *([step.model.end] if step.model else []),
        ]
        if t is not None
    ]
    return min(times) if times else None


def _timed(estimated: dict[str, str]) -> bool:
    """False when start or end had to be placed because the source had none."""
    return not any(estimated.get(k, "").startswith(_MISSING) for k in ("start", "end"))


def build_run(draft: RunDraft) -> ImportedRun:
    """Put a draft on the run axis and make the header, events and report.

    Returns:
        The imported run; its events are run_start, then per step the model call, tool
        calls, sandbox operations and the step summary, then run_end.
    """
    axis = _Axis(_origin(draft))
    run_id = draft.run_id
    events: list[TraceEvent] = []
    events.append(
        RunStartEvent(
            run_id=run_id,
            wall_time=axis.wall(0.0),
            start=0.0,
            end=0.0,
            task=draft.task,
            prompt=draft.prompt,
            sandbox_start_s=draft.sandbox_start_s,
            estimated=(
                {"sandbox_start_s": draft.sandbox_start_how}
                if draft.sandbox_start_s is not None and draft.sandbox_start_how
                else {}
            ),
        )
    )
    totals = _Totals()
    for index, step in enumerate(draft.steps):
        spans: list[tuple[float, float]] = []
        model_span: tuple[float, float] | None = None
        step_estimated: dict[str, str] = {}
        if step.model is not None:
            m = step.model
            est = dict(m.estimated)
            start, end = axis.place(m.start, m.end, est)
            model_span = (start, end)
            if _timed(est):
                totals.timed_models += 1
            else:
                step_estimated["model_s"] = "the model call has no times: counted as zero"
            if ("start" in est or "end" in est) and not m.duration_measured:
                step_estimated.setdefault("model_s", "from the model call's estimated start/end")
            events.append(
                ModelCallEvent(
                    run_id=run_id,
                    step=index,
                    wall_time=axis.wall(start),
                    start=start,
                    end=end,
                    estimated=est,
                    sent=axis.rel(m.sent),
                    first_token=axis.rel(m.first_token),
                    last_token=axis.rel(m.last_token),
                    prompt_tokens=m.prompt_tokens,
                    cached_tokens=m.cached_tokens,
                    completion_tokens=m.completion_tokens,
                    reasoning_tokens=m.reasoning_tokens,
                    finish_reason=m.finish_reason,
                    model=m.model,
                    request_id=m.request_id,
                    message=m.message,
                )
            )
            totals.add_model(m)
        tool_spans: list[tuple[float, float]] = []
        for t in step.tools:
            est = dict(t.estimated)
            start, end = axis.place(t.start, t.end, est)
            tool_spans.append((start, end))
            if _timed(est):
                totals.timed_tools += 1
            else:
                step_estimated["tool_s"] = "a tool call has no times: counted as zero"
            if ("start" in est or "end" in est) and not t.duration_measured:
                step_estimated.setdefault("tool_s", "from tool calls' estimated start/end")
            events.append(
                ToolCallEvent(
                    run_id=run_id,
                    step=index,
                    wall_time=axis.wall(start),
                    start=start,
                    end=end,
                    estimated=est,
                    call_id=t.call_id,
                    name=t.name,
                    arguments=t.arguments,
                    ok=t.ok,
                    exit_code=t.exit_code,
                    error=t.error,
                    output=cut(t.output),
                    output_chars=t.output_chars,
                )
            )
            totals.tool_calls += 1
        for s in step.sandbox:
            est = dict(s.estimated)
            start, end = axis.place(s.start, s.end, est)
            events.append(
                SandboxOpEvent(
                    run_id=run_id,
                    step=index,
                    wall_time=axis.wall(start),
                    start=start,
                    end=end,
                    estimated=est,
                    op=s.op,
                    sandbox_id=s.sandbox_id,
                    detail=s.detail,
                )
            )
            totals.sandbox_ops += 1
        spans = ([model_span] if model_span else []) + tool_spans
        if not spans:
            continue
        step_start = min(a for a, _ in spans)
        step_end = max(b for _, b in spans)
        model_s = model_span[1] - model_span[0] if model_span else 0.0
        hole = model_span or (step_start, step_start)
        tool_s = _union_outside(tool_spans, hole)
        overhead = max(0.0, (step_end - step_start) - model_s - tool_s)
        if model_span is not None and any(a < model_span[1] for a, _ in tool_spans):
            step_estimated.setdefault(
                "tool_s", "tool time overlapping the model call is counted as model time"
            )
        if step_estimated:
            step_estimated.setdefault("overhead_s", "step wall minus the estimated splits")
        events.append(
            StepEvent(
                run_id=run_id,
                step=index,
                wall_time=axis.wall(step_start),
                start=step_start,
                end=step_end,
                estimated=step_estimated,
                model_s=model_s,
                tool_s=tool_s,
                overhead_s=overhead,
            )
        )
        totals.model_s += model_s
        totals.tool_s += tool_s
    run_end_time = axis.cursor
    run_end_est: dict[str, str] = {}
    if draft.end_time is not None and axis.origin is not None:
        run_end_time = max(run_end_time, draft.end_time - axis.origin)
    model_known = totals.timed_models > 0
    tool_known = totals.timed_tools > 0
    if totals.timed_models < totals.model_calls:
        draft.absent.update({"model_call.start", "model_call.end"})
        draft.notes.append(
            f"{totals.model_calls - totals.timed_models} of {totals.model_calls} model calls "
            "have no times (zero-length placeholders; totals cover the timed ones)"
        )
    if totals.timed_tools < totals.tool_calls:
        draft.absent.update({"tool_call.start", "tool_call.end"})
        draft.notes.append(
            f"{totals.tool_calls - totals.timed_tools} of {totals.tool_calls} tool calls "
            "have no times (zero-length placeholders; totals cover the timed ones)"
        )
    end_reason = draft.end_reason or "unknown"
    if draft.end_reason is None:
        draft.absent.add("run_end.end_reason")
    if draft.success is None:
        draft.absent.add("run_end.success")
    if axis.origin is None:
        draft.absent.add("wall_time")
    events.append(
        RunEndEvent(
            run_id=run_id,
            wall_time=axis.wall(0.0),
            start=0.0,
            end=run_end_time,
            estimated=run_end_est,
            end_reason=end_reason,
            success=draft.success,
            check_output=draft.check_output,
            steps=len(draft.steps),
            model_s=totals.model_s if model_known else None,
            tool_s=totals.tool_s if tool_known else None,
            error=draft.error,
        )
    )
    absent = sorted(draft.absent)
    header = TraceHeader(
        run_id=run_id,
        created=draft.created or (axis.wall(0.0) or datetime.fromtimestamp(0, UTC)),
        source=f"import:{draft.fmt}",
        source_path=str(draft.source_path),
        task=draft.task,
        agent=draft.agent,
        model=draft.model,
        sandbox=draft.sandbox,
        clock="recorded",
        absent=absent,
        notes=[
            f"model time: {draft.model_timing}",
            f"tool time: {draft.tool_timing}",
            *draft.notes,
        ],
    )
    report = ImportReport(
        fmt=draft.fmt,
        run_id=run_id,
        source_path=str(draft.source_path),
        steps=len(draft.steps),
        model_calls=totals.model_calls,
        tool_calls=totals.tool_calls,
        sandbox_ops=totals.sandbox_ops,
        prompt_tokens=totals.prompt,
        cached_tokens=totals.cached,
        completion_tokens=totals.completion,
        model_s=totals.model_s if model_known else None,
        tool_s=totals.tool_s if tool_known else None,
        model_timing=draft.model_timing,
        tool_timing=draft.tool_timing,
        end_reason=end_reason,
        success=draft.success,
        absent=absent,
        notes=list(draft.notes),
    )
    return ImportedRun(header=header, events=events, report=report)


@dataclass
class _Totals:
    model_calls: int = 0
    tool_calls: int = 0
    sandbox_ops: int = 0
    timed_models: int = 0
    timed_tools: int = 0
    prompt: int | None = None
    cached: int | None = None
    completion: int | None = None
    model_s: float = 0.0
    tool_s: float = 0.0

    def add_model(self, m: ModelDraft) -> None:
        self.model_calls += 1
        if m.prompt_tokens is not None:
            self.prompt = (self.prompt or 0) + m.prompt_tokens
        if m.cached_tokens is not None:
            self.cached = (self.cached or 0) + m.cached_tokens
        if m.completion_tokens is not None:
            self.completion = (self.completion or 0) + m.completion_tokens
