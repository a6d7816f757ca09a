"""The trace-driven task kind: reading what a task reference names, and how it runs.

Task names (`trace:PATH`, `workload:PATH`, `workload/<id>`) are parsed by the task
format (`looplab.tasks.references`); this module reads the files they name and gives the
shape a cell plays:

- `trace:PATH`: the recorded run's exact shape (`shape_from_trace`); a directory gives
  one task per trace in it (or in its `traces/`);
- `workload:PATH`, `workload/<id>`: a draw from the workload model, seeded by the cell's
  seed (the experiment's `seed` + repetition), so every backend of one repetition runs
  the same shape (paired comparisons) and each repetition draws a new one.

Entries are checked when the experiment is validated, before anything is written: a
missing file, a file that is not a trace or not a workload model, or a trace without
token counts is a `ConfigError` naming the entry and what was expected.
"""

from __future__ import annotations

import fnmatch
from typing import Literal

from pydantic import Field

from looplab.config import StrictModel
from looplab.errors import ConfigError, TraceError
from looplab.tasks.references import (
    BUNDLED_WORKLOAD_PREFIX,
    TRACE_PREFIX,
    list_workloads,
    parse_reference,
)
from looplab.traces.inputs import find_trace_files
from looplab.traces.io import read_trace
from looplab.workloads.model import load_workload
from looplab.workloads.sample import draw_shape
from looplab.workloads.shape import TaskShape, shape_from_trace

__all__ = ["WorkloadSettings", "expand_workload_entry", "load_shape"]

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
    repetitions: int | None = Field(default=None, ge=1)
    """Repetitions of trace-driven tasks (None: the experiment's `repetitions`): several
    draws of a workload beside one run of each bundled task."""
    concurrency: int | None = Field(default=None, ge=1, le=64)
    """Trace-driven cells in flight at once, in a pool of their own (None: they share the
    experiment's `concurrency`): on the virtual clock they mostly sleep in their synthetic
    tools, so many can run beside a few CPU-bound bundled tasks."""
    clock: Literal["wall", "virtual"] | None = None
    """The clock of trace-driven cells (None: the experiment's `clock`). `virtual` runs
    them through the same loop, sandbox and tools but computes model time from the
    profile, so a 100-step real-agent shape at 80 tok/s costs its tool time, not minutes
    of waiting (live and virtual agree within 3%: `looplab bench workload`)."""


def expand_workload_entry(entry: str, where: str = "tasks") -> list[str]:
    """The task names of one `tasks:` entry (a trace directory gives one per trace, a
    `workload/*` glob one per bundled workload). Every file is read and checked.

    Raises:
        ConfigError: not a trace-driven entry, a missing or wrong file, or a trace that
            cannot give a shape; naming `where`, the entry and what was expected.
    """
    reference = parse_reference(entry)
    if reference is None:
        raise ConfigError(f"{entry!r} is not a workload task; expected {_EXPECTED}", field=where)
    if entry.startswith(BUNDLED_WORKLOAD_PREFIX) and any(ch in entry for ch in "*?["):
        matches = fnmatch.filter(list_workloads(), entry)
        if not matches:
            raise ConfigError(
                f"{entry!r} matches no bundled workload", field=where, allowed=list_workloads()
            )
        return matches
    if entry.startswith(BUNDLED_WORKLOAD_PREFIX) and not reference.path.is_file():
        raise ConfigError(f"no bundled workload {entry!r}", field=where, allowed=list_workloads())
    names = [entry]
    if reference.kind == "trace" and reference.path.is_dir():
        names = [f"{TRACE_PREFIX}{file}" for file in find_trace_files(reference.path, flag=where)]
    for name in names:
        try:
            load_shape(name, 0, where=where)
        except ConfigError as exc:
            if len(names) == 1:
                raise
            raise ConfigError(
                f"{exc} (in {entry!r}: name the usable traces one by one, or move this one "
                "out of the directory)"
            ) from None
    return names


def load_shape(name: str, seed: int, *, where: str = "task") -> TaskShape:
    """The shape a trace-driven task runs: a trace's exact shape, or a model's draw.

    Raises:
        ConfigError: the file is missing, not a trace / workload model, or gives no shape.
    """
    reference = parse_reference(name)
    if reference is None:
        raise ConfigError(f"{name!r} is not a workload task; expected {_EXPECTED}", field=where)
    path = reference.path
    if not path.is_file():
        what = "trace file" if reference.kind == "trace" else "workload model file"
        raise ConfigError(f"{name!r}: no such {what} ({path})", field=where)
    if reference.kind == "trace":
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
    try:
        model = load_workload(path)
    except ConfigError as exc:
        raise ConfigError(
            f"{name!r}: not a workload model ({exc}); expected a YAML file written by "
            "`looplab calibrate` (format: looplab-workload-1)",
            field=where,
        ) from None
    return draw_shape(model, seed)
