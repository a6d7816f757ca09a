"""The trace-driven task kind: how experiment configs name workloads and traces.

In an experiment's `tasks:` list, next to bundled task ids:

| entry | one task per | the shape it runs |
|---|---|---|
| `trace:PATH` | trace file (a directory: each of its traces) | the recorded run's exact shape |
| `workload:PATH` | entry | a seeded draw from the workload model file |
| `workload/<id>` | entry | a draw from `tasks/workload/<id>/workload.yaml` (bundled; globs too) |

Relative paths are relative to the working directory. A model draw uses the cell's
seed (the experiment's `seed` + repetition), so every backend of one repetition runs the
same shape (paired comparisons) and each repetition draws a new one. Entries are checked
when the experiment is validated, before anything is written: a missing file, a file
that is not a trace or not a workload model, or a trace without token counts is a
`ConfigError` naming the entry and what was expected.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from pathlib import Path
from typing import Literal

from pydantic import Field

from looplab.bundled import bundled_tasks_dir
from looplab.config import StrictModel
from looplab.errors import ConfigError, TraceError
from looplab.traces.inputs import find_trace_files
from looplab.traces.io import read_trace
from looplab.workloads.model import load_workload
from looplab.workloads.sample import draw_shape
from looplab.workloads.shape import TaskShape, shape_from_trace

__all__ = [
    "WorkloadSettings",
    "bundled_workloads",
    "expand_workload_entry",
    "is_workload_task",
    "load_shape",
    "workload_slug",
]

TRACE_PREFIX = "trace:"
MODEL_PREFIX = "workload:"
BUNDLED_PREFIX = "workload/"
_EXPECTED = (
    "trace:PATH (a looplab trace file or a directory of traces), workload:PATH (a workload "
    "model YAML written by `looplab calibrate`), or workload/<id> (a bundled workload)"
)


class WorkloadSettings(StrictModel):
    """How trace-driven tasks run (the experiment config's `workload:` section)."""

    tool_scale: float = Field(default=1.0, gt=0, le=100)
    """Multiplies every tool call's seconds (a benchmark may shorten long tools; any
    prediction compared with such runs must use the same factor)."""
    cpu_share: float = Field(default=0.0, ge=0, le=1)
    """Share of each synthetic tool call spent burning one CPU in the sandbox; the rest
    sleeps there (0: sleep only, so concurrent runs do not contend for this machine)."""
    cache: Literal["recorded", "simulator"] = "recorded"
    """Prompt-cache hits: `recorded` plays each step's recorded (or drawn) cached tokens,
    as the recorded backend served them; `simulator` leaves them to the simulator's
    prefix cache and the profile's `prefix_cache` settings."""
    harness_time: bool = True
    """Emulate each step's recorded/drawn other (harness) time: the agent sleeps that
    long after the step's tools, counted as the step's overhead."""


def is_workload_task(name: str) -> bool:
    """True for `trace:...`, `workload:...` and `workload/<id>` task names."""
    return name.startswith((TRACE_PREFIX, MODEL_PREFIX, BUNDLED_PREFIX))


def bundled_workloads() -> list[str]:
    """Ids (`workload/<id>`) of the bundled workload models, sorted."""
    root = bundled_tasks_dir() / "workload"
    return [f"{BUNDLED_PREFIX}{p.parent.name}" for p in sorted(root.glob("*/workload.yaml"))]


def _model_path(name: str) -> Path:
    if name.startswith(MODEL_PREFIX):
        return Path(name.removeprefix(MODEL_PREFIX))
    return bundled_tasks_dir() / name / "workload.yaml"


def expand_workload_entry(entry: str, where: str = "tasks") -> list[str]:
    """The task names of one `tasks:` entry (a trace directory gives one per trace).

    Every file is read and checked (see the module docstring).

    Raises:
        ConfigError: not a workload entry, a missing or wrong file, or a trace that
            cannot give a shape; naming `where`, the entry and what was expected.
    """
    if entry.startswith(TRACE_PREFIX):
        path = Path(entry.removeprefix(TRACE_PREFIX))
        files = find_trace_files(path, flag=where)
        names = [f"{TRACE_PREFIX}{file}" for file in files] if path.is_dir() else [entry]
        for name in names:
            load_shape(name, 0, where=where)
        return names
    if entry.startswith(BUNDLED_PREFIX) and any(ch in entry for ch in "*?["):
        matches = fnmatch.filter(bundled_workloads(), entry)
        if not matches:
            raise ConfigError(
                f"{entry!r} matches no bundled workload", field=where, allowed=bundled_workloads()
            )
        return matches
    if entry.startswith((MODEL_PREFIX, BUNDLED_PREFIX)):
        if entry.startswith(BUNDLED_PREFIX) and not _model_path(entry).is_file():
            raise ConfigError(
                f"no bundled workload {entry!r}", field=where, allowed=bundled_workloads()
            )
        load_shape(entry, 0, where=where)
        return [entry]
    raise ConfigError(f"{entry!r} is not a workload task; expected {_EXPECTED}", field=where)


def load_shape(name: str, seed: int, *, where: str = "task") -> TaskShape:
    """The shape a workload task runs: a trace's exact shape, or a model's draw.

    Raises:
        ConfigError: the file is missing, not a trace / workload model, or gives no shape.
    """
    if name.startswith(TRACE_PREFIX):
        path = Path(name.removeprefix(TRACE_PREFIX))
        if not path.is_file():
            raise ConfigError(f"{name!r}: no such trace file", field=where)
        try:
            trace = read_trace(path)
            if not trace.complete:
                raise TraceError(f"{path}: the trace is incomplete (no run_end)")
            return shape_from_trace(trace)
        except TraceError as exc:
            raise ConfigError(
                f"{name!r}: {exc}; expected a complete looplab trace with token counts "
                "(`looplab import` converts other harnesses' runs)",
                field=where,
            ) from None
    if name.startswith((MODEL_PREFIX, BUNDLED_PREFIX)):
        path = _model_path(name)
        if not path.is_file():
            raise ConfigError(f"{name!r}: no such workload model file", field=where)
        try:
            model = load_workload(path)
        except ConfigError as exc:
            raise ConfigError(
                f"{name!r}: not a workload model ({exc}); expected a YAML file written by "
                "`looplab calibrate` (format: looplab-workload-1)",
                field=where,
            ) from None
        return draw_shape(model, seed)
    raise ConfigError(f"{name!r} is not a workload task; expected {_EXPECTED}", field=where)


_SLUG = re.compile(r"[^A-Za-z0-9.-]+")


def workload_slug(name: str) -> str:
    """A short, stable cell-id part: `trace-<stem>-<hash>`, `workload-<stem>-<hash>`,
    `workload-<id>`."""
    if name.startswith(BUNDLED_PREFIX):
        return "workload-" + _SLUG.sub("-", name.removeprefix(BUNDLED_PREFIX)).strip("-")
    kind = "trace" if name.startswith(TRACE_PREFIX) else "workload"
    stem = Path(name.partition(":")[2]).name.removesuffix(".jsonl").removesuffix(".yaml")
    digest = hashlib.sha256(name.encode()).hexdigest()[:6]
    return f"{kind}-{_SLUG.sub('-', stem).strip('-')[:40]}-{digest}"
