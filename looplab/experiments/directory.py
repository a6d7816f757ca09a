"""An experiment directory: its stored config, its traces, and cut-off runs set aside.

`prepare` creates the directory or checks that an existing one holds the same experiment
(the stored `config.json`, written atomically, secrets scrubbed); `is_complete` tells a
trace that ended from one that was cut off; `set_aside` moves a cut-off trace to
`traces/incomplete/`, where it is kept and never counted.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from looplab.clock import utc_now
from looplab.errors import ConfigError, TraceError
from looplab.layout import ExperimentDir, trace_path
from looplab.traces.io import read_trace

__all__ = ["REPORT_ONLY", "is_complete", "prepare", "set_aside"]


REPORT_ONLY = frozenset({"deadline_s"})
"""Config fields that change how results are read, not the runs: a resumed experiment may
change them (the stored config takes the new value)."""


def prepare(directory: Path, config: dict[str, Any], *, fresh: bool) -> None:
    """Create `directory` (with `traces/`) for `config`, or accept it if it holds the same.

    Args:
        directory: the experiment directory.
        config: the experiment's config as JSON data (already scrubbed).
        fresh: delete whatever the directory holds first.

    Raises:
        ConfigError: the directory holds a different experiment, or an unreadable config.
    """
    layout = ExperimentDir(directory)
    stored = layout.config
    if fresh and directory.exists():
        _empty(directory)
    if stored.exists():
        previous = _read_config(stored)
        changed = sorted(
            k
            for k in (set(previous) | set(config)) - REPORT_ONLY
            if previous.get(k) != config.get(k)
        )
        if changed:
            raise ConfigError(
                f"{directory} holds a different experiment "
                f"(changed: {', '.join(changed)}); use another output_dir, "
                "or --fresh to discard the old results",
                field="output_dir",
            )
    layout.traces.mkdir(parents=True, exist_ok=True)
    temporary = stored.with_name(".config.json.tmp")
    temporary.write_text(json.dumps(config, indent=2))
    os.replace(temporary, stored)


def _empty(directory: Path) -> None:
    """Delete what `directory` holds but its lock (held by this run: deleting the file
    would let a second run lock a new one)."""
    for child in directory.iterdir():
        if child == ExperimentDir(directory).lock:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def is_complete(path: Path) -> bool:
    """The trace at `path` ended with run_end (an unreadable one counts as cut off)."""
    try:
        return read_trace(path).complete
    except TraceError:
        return False


def set_aside(traces: Path, path: Path) -> Path:
    """Move a cut-off trace to `traces/incomplete/` under a time-stamped name."""
    aside = ExperimentDir(traces.parent).incomplete
    aside.mkdir(exist_ok=True)
    stamp = utc_now().strftime("%Y%m%dT%H%M%S%f")
    target = trace_path(aside, f"{path.stem}.{stamp}")
    path.rename(target)
    return target


def _read_config(path: Path) -> dict[str, Any]:
    """The stored config of an experiment directory.

    Raises:
        ConfigError: it is not a JSON object (then --fresh starts over).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"cannot read {path.name} ({exc}); use --fresh to start over", source=str(path)
        ) from None
    if not isinstance(data, dict):
        raise ConfigError("not a JSON object; use --fresh to start over", source=str(path))
    return data
