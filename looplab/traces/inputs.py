"""The one way every command finds traces: a trace file, a directory of traces, an
experiment directory (its `traces/*.jsonl`), or a directory of those one level down (the
shipped `corpus/`, one folder per harness; a folder of experiments).

Only regular files named `*.jsonl` (or `*.jsonl.gz`, compressed) count (a FIFO or socket
named like a trace is skipped, never opened); `traces/incomplete/` is never searched.

One bad trace found in a directory does not sink the rest: `load_traces` names it on
stderr and sets it aside (`read_traces`); a file named on its own is still an error. A
caller that shows its result elsewhere (the report file, the dashboard) passes a
`set_aside` list and names each `SetAside` there too (issue 47, finding 9).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from looplab.console import err_console
from looplab.errors import ConfigError, TraceError
from looplab.layout import ExperimentDir
from looplab.traces.io import Trace, read_trace

__all__ = ["SetAside", "find_trace_files", "load_traces", "read_traces"]


@dataclass(frozen=True)
class SetAside:
    """A trace file found but not counted, and why."""

    path: str
    reason: str


def _regular_traces(directory: Path) -> list[Path]:
    found = [*directory.glob("*.jsonl"), *directory.glob("*.jsonl.gz")]
    return sorted(p for p in found if p.is_file())


def _directory_traces(directory: Path) -> list[Path]:
    """The traces of an experiment directory (`traces/`), else of the directory itself."""
    for candidate in (ExperimentDir(directory).traces, directory):
        if candidate.is_dir():
            files = _regular_traces(candidate)
            if files:
                return files
    return []


def find_trace_files(path: Path, *, flag: str = "TRACES") -> list[Path]:
    """The trace files of one input path.

    Args:
        path: a trace file, a directory holding `*.jsonl` traces, an experiment
            directory holding `traces/*.jsonl`, or a directory whose sub-directories
            are such directories (one level down, in name order).
        flag: the argument's name in the command, used in error messages.

    Raises:
        ConfigError: no such path, not a regular file, or a directory without traces.
    """
    if path.is_dir():
        files = _directory_traces(path)
        if not files:
            for sub in sorted(p for p in path.iterdir() if p.is_dir()):
                files += _directory_traces(sub)
        if files:
            return files
        raise ConfigError(
            f"{path}: no traces here (expected a trace file, *.jsonl traces, an "
            "experiment directory with traces/*.jsonl, or a directory of those)",
            field=flag,
        )
    if not path.exists():
        raise ConfigError(f"{path}: no such file or directory", field=flag)
    if not path.is_file():
        raise ConfigError(f"{path}: not a regular file", field=flag)
    return [path]


def load_traces(
    paths: Iterable[Path], *, complete_only: bool = True, flag: str = "TRACES"
) -> list[Trace]:
    """Every trace under `paths` (see `find_trace_files`), in path order.

    Args:
        paths: input paths as the user gave them.
        complete_only: drop traces without a `run_end` (cut-off runs).
        flag: the argument's name in the command, used in error messages.

    Raises:
        ConfigError: an input without traces (see `find_trace_files`).
        TraceError: a file that is not a looplab trace.
    """
    traces: list[Trace] = []
    for path in paths:
        for trace in read_traces(path, flag=flag):
            if trace.complete or not complete_only:
                traces.append(trace)
    return traces


def read_traces(
    path: Path, *, flag: str = "TRACES", set_aside: list[SetAside] | None = None
) -> list[Trace]:
    """The readable traces of one input path; a bad one inside a directory is named on
    stderr and set aside (`trace set aside: FILE: why`), and added to `set_aside`.

    Raises:
        ConfigError: see `find_trace_files`.
        TraceError: `path` is a single file that is not a trace, or no trace under the
            directory is readable (the first one's error).
    """
    files = find_trace_files(path, flag=flag)
    if not path.is_dir():
        return [read_trace(file) for file in files]
    traces: list[Trace] = []
    errors: list[TraceError] = []
    for file in files:
        try:
            traces.append(read_trace(file))
        except TraceError as exc:
            errors.append(exc)
            if set_aside is not None:
                reason = str(exc).removeprefix(f"{exc.path}: ") if exc.path else str(exc)
                set_aside.append(SetAside(str(file), reason))
            err_console().print(f"[yellow]trace set aside:[/] {exc}", highlight=False)
    if errors and not traces:
        raise errors[0]
    return traces
