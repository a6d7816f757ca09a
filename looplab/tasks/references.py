"""Trace-driven task names: tasks that are a recorded run's shape or a workload's draw.

A task name in an experiment is a task id (`coding/fix-pager`, or a family instance
`coding/nbugs-8`, see `discovery.py`) or one of these references:

| name | refers to | runs |
|---|---|---|
| `trace:PATH` | a looplab trace file (or a directory of them) | the recorded run's exact shape |
| `workload:PATH` | a workload model YAML (`looplab calibrate`) | a seeded draw from it |
| `workload/<id>` | the bundled `tasks/workload/<id>/workload.yaml` | a seeded draw from it |

Relative paths are relative to the working directory. This module only parses and names
references; reading the files and playing the shapes is `looplab.workloads`' business.
Bundled workloads hold a `workload.yaml`, not a `task.yaml`, so task discovery
(`list_tasks`) never mistakes one for a task directory.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from looplab.tasks.discovery import default_tasks_dir

__all__ = [
    "BUNDLED_WORKLOAD_PREFIX",
    "MODEL_PREFIX",
    "TRACE_PREFIX",
    "TaskReference",
    "is_trace_driven",
    "list_workloads",
    "parse_reference",
    "reference_slug",
]

TRACE_PREFIX = "trace:"
"""`trace:PATH`: a recorded run's shape."""
MODEL_PREFIX = "workload:"
"""`workload:PATH`: draws from a workload model file."""
BUNDLED_WORKLOAD_PREFIX = "workload/"
"""`workload/<id>`: draws from a bundled workload model."""


@dataclass(frozen=True)
class TaskReference:
    """A parsed trace-driven task name."""

    name: str
    """The name as written."""
    kind: Literal["trace", "model"]
    """`trace`: a trace file's exact shape; `model`: a workload model's draws."""
    path: Path
    """The trace file (or directory) or the workload model file."""


def is_trace_driven(name: str) -> bool:
    """True for `trace:...`, `workload:...` and `workload/<id>` names."""
    return name.startswith((TRACE_PREFIX, MODEL_PREFIX, BUNDLED_WORKLOAD_PREFIX))


def parse_reference(name: str, tasks_dir: Path | None = None) -> TaskReference | None:
    """The reference `name` makes, or None for an ordinary task id (no file is read)."""
    if name.startswith(TRACE_PREFIX):
        return TaskReference(name, "trace", Path(name.removeprefix(TRACE_PREFIX)))
    if name.startswith(MODEL_PREFIX):
        return TaskReference(name, "model", Path(name.removeprefix(MODEL_PREFIX)))
    if name.startswith(BUNDLED_WORKLOAD_PREFIX):
        root = tasks_dir or default_tasks_dir()
        return TaskReference(name, "model", root / name / "workload.yaml")
    return None


def list_workloads(tasks_dir: Path | None = None) -> list[str]:
    """Names (`workload/<id>`) of the bundled workload models, sorted."""
    root = (tasks_dir or default_tasks_dir()) / "workload"
    return [f"{BUNDLED_WORKLOAD_PREFIX}{p.parent.name}" for p in sorted(root.glob("*/workload.yaml"))]


_SLUG = re.compile(r"[^A-Za-z0-9.-]+")


def reference_slug(name: str) -> str:
    """A short, stable id part for a reference: `workload-<id>` for a bundled one,
    `trace-<stem>-<hash>` / `workload-<stem>-<hash>` for a path (the hash tells apart
    files of the same name in different folders)."""
    if name.startswith(BUNDLED_WORKLOAD_PREFIX):
        rest = name.removeprefix(BUNDLED_WORKLOAD_PREFIX)
        return "workload-" + _SLUG.sub("-", rest).strip("-")
    kind = "trace" if name.startswith(TRACE_PREFIX) else "workload"
    stem = Path(name.partition(":")[2]).name
    for suffix in (".gz", ".jsonl", ".yaml", ".yml"):
        stem = stem.removesuffix(suffix)
    digest = hashlib.sha256(name.encode()).hexdigest()[:6]
    return f"{kind}-{_SLUG.sub('-', stem).strip('-')[:40]}-{digest}"
