"""A task as a runnable instance: its workspace and its check.

The format (`task.yaml` as `TaskSpec`, `solution.yaml` as `Solution`, placeholders,
families, discovery) is the rest of `looplab.tasks`; this module turns a task into a
workspace and judges a run. A task directory holds `task.yaml`, `solution.yaml` (the reference steps),
`files/` (the workspace), optionally `docs/` (copied to `.docs/` in the workspace and
served there) and `check/` (copied to `.check/` only when checking, so the agent never
sees it). The check never trusts the agent: the
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

from looplab.errors import ConfigError
from looplab.sandbox_contract import Sandbox
from looplab.tasks.discovery import list_tasks, read_task, resolve_task_name
from looplab.tasks.solution import Solution, substitute
from looplab.tasks.spec import CheckSpec, FamilyParameter, Limits, ServiceSpec, TaskSpec

__all__ = ["CheckResult", "Task", "load_task"]


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

    @property
    def services(self) -> list[ServiceSpec]:
        """The task's services, a family's `{parameter}` filled into their commands (so a
        web task's parameter can set, say, its app's data latency: `web/travel-search-1500`)."""
        family = self.spec.family
        if family is None or self.parameter is None:
            return list(self.spec.services)
        values = {family.name: str(self.parameter)}
        return [
            spec.model_copy(update={"command": substitute(spec.command, values)})
            for spec in self.spec.services
        ]

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


def load_task(name: str, tasks_dir: Path | None = None) -> Task:
    """Load a task by id; `coding/nbugs-8` instantiates the family `coding/nbugs` with 8.

    Raises:
        ConfigError: unknown task, bad task.yaml/solution.yaml, no solution.yaml, or a
            parameter out of range.
    """
    task_id, parameter = resolve_task_name(name, tasks_dir)
    definition = read_task(task_id, tasks_dir)
    spec = definition.spec
    if definition.solution is None:
        raise ConfigError(f"task {task_id} has no solution.yaml", source=str(definition.directory))
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
        raise ConfigError(
            f"{task_id} is not a parametric family",
            field="task",
            allowed=list_tasks(tasks_dir=tasks_dir),
        )
    return Task(task_id, definition.directory, spec, definition.solution, parameter)
