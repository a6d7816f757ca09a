"""Finding and reading task directories: `<root>/<kind>/<id>/task.yaml` (+ `solution.yaml`).

The root is `looplab.bundled.bundled_tasks_dir()` (`LOOPLAB_TASKS_DIR`, else the shipped
`tasks/`) unless a caller passes its own. A task name is a task id (`coding/fix-pager`)
or, for a parametric family, the id with its parameter (`coding/nbugs-8`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from looplab.bundled import bundled_tasks_dir
from looplab.config import load_model, validate_model
from looplab.errors import ConfigError
from looplab.tasks.solution import Solution
from looplab.tasks.spec import TaskSpec

__all__ = [
    "TaskDefinition",
    "default_tasks_dir",
    "list_tasks",
    "read_all_tasks",
    "read_task",
    "resolve_task_name",
]


@dataclass(frozen=True)
class TaskDefinition:
    """A task directory, read and validated."""

    task_id: str
    """`<kind>/<id>`."""
    directory: Path
    spec: TaskSpec
    solution: Solution | None
    """The reference solution; None when the task has no `solution.yaml`."""


def default_tasks_dir() -> Path:
    """`LOOPLAB_TASKS_DIR`, else the bundled `tasks/` folder (see `looplab.bundled`)."""
    return bundled_tasks_dir()


def list_tasks(kind: str | None = None, tasks_dir: Path | None = None) -> list[str]:
    """Ids (`coding/fix-discount`) of the tasks under the root, sorted; families once,
    unexpanded; only those of `kind` when given."""
    root = tasks_dir or default_tasks_dir()
    ids = [f"{p.parent.parent.name}/{p.parent.name}" for p in sorted(root.glob("*/*/task.yaml"))]
    return [i for i in ids if kind is None or i.startswith(f"{kind}/")]


def read_task(task_id: str, tasks_dir: Path | None = None) -> TaskDefinition:
    """Read and validate one task directory.

    Raises:
        ConfigError: a task.yaml or solution.yaml that fails validation (naming the file).
    """
    directory = (tasks_dir or default_tasks_dir()) / task_id
    spec = load_model(TaskSpec, directory / "task.yaml")
    solution_file = directory / "solution.yaml"
    solution = None
    if solution_file.exists():
        data = yaml.safe_load(solution_file.read_text(encoding="utf-8")) or {}
        solution = validate_model(Solution, data, source=str(solution_file))
    return TaskDefinition(task_id, directory, spec, solution)


def read_all_tasks(tasks_dir: Path | None = None) -> list[TaskDefinition]:
    """Every task under the root, read and validated, in id order."""
    return [read_task(task_id, tasks_dir) for task_id in list_tasks(tasks_dir=tasks_dir)]


def resolve_task_name(name: str, tasks_dir: Path | None = None) -> tuple[str, int | None]:
    """`coding/nbugs-8` -> (`coding/nbugs`, 8); `coding/fix-pager` -> (`coding/fix-pager`,
    None). The range of a family's parameter is checked by the caller (`TaskSpec.family`).

    Raises:
        ConfigError: no such task (listing the known ids).
    """
    known = list_tasks(tasks_dir=tasks_dir)
    if name in known:
        return name, None
    base, _, value = name.rpartition("-")
    if base not in known or not value.isdigit():
        raise ConfigError(f"no bundled task {name!r}", field="task", allowed=known, given=name)
    return base, int(value)
