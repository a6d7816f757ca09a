"""Bundled tasks: `tasks/<kind>/<id>/` specs, workspaces, in-sandbox services and checks.

A task directory holds `task.yaml` (`TaskSpec`), `solution.yaml` (the reference steps, see
`looplab.backends.policies.scripted`), `files/` (the workspace), optionally `docs/`
(copied to `.docs/` in the workspace and served there) and `check/` (copied to `.check/`
only when checking, so the agent never sees it). The check never trusts the agent: the
paths in `check.restore` are put back from the pristine workspace first, then
`check.command` runs in the sandbox and its exit code is the verdict.

A parametric family (`family` in task.yaml, items in solution.yaml) is instantiated per
parameter value: its `files/` hold correct code and the first `n` items' `new` text is
turned back into their `old` (buggy) text.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field

from looplab.backends.policies.scripted import Solution, default_tasks_dir, substitute
from looplab.config import StrictModel, load_model, validate_model
from looplab.errors import ConfigError
from looplab.sandbox import Sandbox

__all__ = [
    "CheckResult",
    "CheckSpec",
    "FamilyParameter",
    "Limits",
    "ServiceSpec",
    "Task",
    "TaskSpec",
    "list_tasks",
    "load_task",
]


class ServiceSpec(StrictModel):
    """A server started inside the sandbox before the agent runs (docs site, web app)."""

    name: str
    """Name; the prompt placeholder `{<name>_url}` becomes its base URL."""
    command: str
    """Shell command; `{port}` becomes the port to listen on and `{bind}` the address to
    bind (127.0.0.1 in a local sandbox, 0.0.0.0 in a container so a published port
    reaches it)."""
    port: int = Field(default=8000, ge=1, le=65535)
    """Port inside the sandbox when it has its own network namespace."""


class CheckSpec(StrictModel):
    """How a run's outcome is judged, independently of what the agent says."""

    command: str
    """Shell command run in the sandbox after the agent; exit 0 means solved."""
    restore: list[str] = Field(default_factory=list)
    """Workspace paths (files or folders) reset from the pristine task files first."""
    timeout_s: float = Field(default=300.0, gt=0)
    """Longest the check may take."""


class Limits(StrictModel):
    """Per-task limits for the agent."""

    max_steps: int = Field(default=60, ge=1)
    """Model calls allowed."""
    wall_time_s: float = Field(default=900.0, gt=0)
    """Wall-time budget of the run."""


class FamilyParameter(StrictModel):
    """The parameter of a parametric family."""

    name: str = "n"
    """Placeholder in the prompt."""
    min: int = Field(default=1, ge=0)
    """Smallest value."""
    max: int = Field(ge=1)
    """Largest value."""
    default: int = Field(ge=0)
    """Value used when none is given."""


class TaskSpec(StrictModel):
    """`task.yaml`."""

    title: str
    """One line."""
    kind: Literal["coding", "web"]
    """Which agent solves it."""
    category: str
    """bug-fix, implement-from-docs, refactor, slow-tests, flaky-tests, form, ..."""
    prompt: str
    """The user message; `{docs_url}`, `{app_url}`, `{n}` placeholders are filled in."""
    services: list[ServiceSpec] = Field(default_factory=list)
    """Servers started in the sandbox."""
    check: CheckSpec
    """The verdict."""
    limits: Limits = Field(default_factory=Limits)
    """Agent limits."""
    network: Literal["none", "bridge"] = "none"
    """Sandbox network; web tasks need `bridge` so the host's browser reaches the app."""
    family: FamilyParameter | None = None
    """Set for a parametric family."""
    include: dict[str, str] = Field(default_factory=dict)
    """Shared files copied into the workspace: workspace path -> path under the suite
    folder (`tasks/<kind>/`), e.g. `app/webapp.py: _shared/webapp.py`."""


@dataclass(frozen=True)
class CheckResult:
    """The checker's verdict."""

    passed: bool
    exit_code: int
    output: str


@dataclass(frozen=True)
class Task:
    """One task instance (a family with its parameter value)."""

    task_id: str
    directory: Path
    spec: TaskSpec
    solution: Solution
    parameter: int | None = None

    @property
    def name(self) -> str:
        """`coding/fix-discount`, or `coding/nbugs-8` for a family instance."""
        return self.task_id if self.parameter is None else f"{self.task_id}-{self.parameter}"

    def prompt(self, urls: dict[str, str]) -> str:
        """The user message with service URLs (`{docs_url}`) and the parameter filled in."""
        values = {f"{name}_url": url for name, url in urls.items()}
        if self.spec.family is not None and self.parameter is not None:
            values[self.spec.family.name] = str(self.parameter)
        return str(substitute(self.spec.prompt.strip(), values))

    def build_workspace(self) -> Path:
        """A fresh host directory with the workspace as the agent first sees it.

        The caller owns (and removes) the returned directory.
        """
        root = Path(tempfile.mkdtemp(prefix=f"looplab-task-{self.directory.name}-"))
        workspace = root / "workspace"
        shutil.copytree(self.directory / "files", workspace)
        if (self.directory / "docs").is_dir():
            shutil.copytree(self.directory / "docs", workspace / ".docs")
        for destination, source in self.spec.include.items():
            (workspace / destination).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.directory.parent / source, workspace / destination)
        family = self.solution.family
        if family is not None and self.parameter is not None:
            for item in family.items[: self.parameter]:
                target = workspace / item["file"]
                text = target.read_text(encoding="utf-8")
                if text.count(item["new"]) != 1:
                    raise ConfigError(
                        f"family item {item.get('name')} does not match {item['file']} once",
                        source=str(self.directory / "solution.yaml"),
                    )
                target.write_text(text.replace(item["new"], item["old"]), encoding="utf-8")
        return workspace

    async def check(self, sandbox: Sandbox, pristine: Path) -> CheckResult:
        """Restore protected paths, copy the hidden checks in, and run the check command.

        Args:
            sandbox: the sandbox the agent worked in.
            pristine: the untouched workspace from `build_workspace`.
        """
        for relative in self.spec.check.restore:
            source = pristine / relative
            files = [source] if source.is_file() else sorted(source.rglob("*"))
            for path in files:
                if path.is_file():
                    await sandbox.write_file(str(path.relative_to(pristine)), path.read_bytes())
        hidden = self.directory / "check"
        if hidden.is_dir():
            for path in sorted(hidden.rglob("*")):
                if path.is_file():
                    target = f".check/{path.relative_to(hidden)}"
                    await sandbox.write_file(target, path.read_bytes())
        result = await sandbox.exec(self.spec.check.command, timeout_s=self.spec.check.timeout_s)
        return CheckResult(result.ok, result.exit_code, result.stdout + result.stderr)


def list_tasks(kind: str | None = None, tasks_dir: Path | None = None) -> list[str]:
    """Ids (`coding/fix-discount`) of the bundled tasks, sorted; families once, unexpanded."""
    root = tasks_dir or default_tasks_dir()
    ids = [f"{p.parent.parent.name}/{p.parent.name}" for p in sorted(root.glob("*/*/task.yaml"))]
    return [i for i in ids if kind is None or i.startswith(f"{kind}/")]


def load_task(name: str, tasks_dir: Path | None = None) -> Task:
    """Load a task by id; `coding/nbugs-8` instantiates the family `coding/nbugs` with 8.

    Raises:
        ConfigError: unknown task, bad task.yaml/solution.yaml, or a parameter out of range.
    """
    root = tasks_dir or default_tasks_dir()
    known = list_tasks(tasks_dir=root)
    task_id, parameter = name, None
    if name not in known:
        base, _, value = name.rpartition("-")
        if base not in known or not value.isdigit():
            raise ConfigError(f"no bundled task {name!r}", field="task", allowed=known)
        task_id, parameter = base, int(value)
    directory = root / task_id
    spec = load_model(TaskSpec, directory / "task.yaml")
    solution_file = directory / "solution.yaml"
    data = yaml.safe_load(solution_file.read_text(encoding="utf-8")) or {}
    solution = validate_model(Solution, data, source=str(solution_file))
    if spec.family is not None:
        family = spec.family
        parameter = family.default if parameter is None else parameter
        if not family.min <= parameter <= family.max:
            raise ConfigError(
                f"{family.name}={parameter} is out of range",
                field=f"{task_id}.{family.name}",
                allowed=[f"{family.min}..{family.max}"],
            )
    elif parameter is not None:
        raise ConfigError(f"{task_id} is not a parametric family", field="task", allowed=known)
    return Task(task_id, directory, spec, solution, parameter)
