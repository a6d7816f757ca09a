"""Expanding an experiment into cells: backend x agent x task x repetition."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from looplab.agents.runner import TASK_KIND_AGENTS
from looplab.agents.taskset import list_tasks, load_task
from looplab.errors import ConfigError
from looplab.experiments.config import BackendSpec, ExperimentConfig, TaskFamily

__all__ = ["Cell", "expand_cells", "expand_tasks"]


@dataclass(frozen=True)
class Cell:
    """One run to make. `id` is stable across invocations, so resume can find it."""

    id: str
    backend: BackendSpec
    agent: str
    task: str
    repetition: int
    seed: int

    def describe(self) -> dict[str, object]:
        """The cell as recorded in a trace header."""
        return {
            "backend": self.backend.name,
            "agent": self.agent,
            "task": self.task,
            "repetition": self.repetition,
            "seed": self.seed,
        }


def expand_tasks(entries: list[str | TaskFamily]) -> list[str]:
    """Task ids from ids, globs and families, in order, without duplicates.

    Raises:
        ConfigError: a glob that matches nothing, or an unknown task/family value.
    """
    known = list_tasks()
    out: list[str] = []
    for index, entry in enumerate(entries):
        where = f"tasks.{index}"
        if isinstance(entry, TaskFamily):
            names = [f"{entry.family}-{value}" for value in entry.values]
        elif any(ch in entry for ch in "*?["):
            names = fnmatch.filter(known, entry)
            if not names:
                raise ConfigError(f"{entry!r} matches no bundled task", field=where, allowed=known)
        else:
            names = [entry]
        for name in names:
            load_task(name)  # raises ConfigError naming the task and the allowed ids
            if name not in out:
                out.append(name)
    return out


def expand_cells(config: ExperimentConfig) -> list[Cell]:
    """Every cell of the experiment, in a deterministic order.

    Raises:
        ConfigError: unknown tasks, or more cells than `max_cells` once globs expand.
    """
    tasks = expand_tasks(config.tasks)
    count = config.repetitions * len(tasks) * len(config.agents) * len(config.backends)
    if count > config.max_cells:
        raise ConfigError(
            f"{count} cells (backends x agents x tasks x repetitions, globs expanded) is more "
            f"than max_cells={config.max_cells}; set max_cells to run that many",
            field="max_cells",
        )
    kinds = {task: load_task(task).spec.kind for task in tasks}
    cells: list[Cell] = []
    for repetition in range(config.repetitions):
        for task in tasks:
            for agent in config.agents:
                for backend in config.backends:
                    agent_name = TASK_KIND_AGENTS[kinds[task]] if agent == "auto" else agent
                    cell_id = "__".join([backend.name, agent_name, _slug(task), f"r{repetition}"])
                    cells.append(
                        Cell(
                            id=cell_id,
                            backend=backend,
                            agent=agent_name,
                            task=task,
                            repetition=repetition,
                            seed=config.seed + repetition,
                        )
                    )
    return cells


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-")
