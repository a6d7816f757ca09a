"""Expanding an experiment into cells: backend x agent x task x repetition."""

from __future__ import annotations

import fnmatch
import functools
import itertools
import re
from dataclasses import dataclass
from typing import Any

from looplab.agents.config import TASK_KIND_AGENTS
from looplab.errors import ConfigError
from looplab.experiments.axes import Variant, apply_to_backend, axis_label, expand_variants
from looplab.experiments.config import BackendSpec, ExperimentConfig, TaskFamily
from looplab.tasks import list_tasks, load_task
from looplab.tasks.references import is_trace_driven, reference_slug
from looplab.traces.cell import TraceCell
from looplab.workloads.resolve import expand_workload_entry

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
    variant: Variant = ()
    """The axis values of this cell (`looplab.experiments.axes`); `backend` has its
    profile ones applied already."""

    def describe(self) -> TraceCell:
        """The cell as recorded in a trace header (`variant` only when there are axes)."""
        described: dict[str, object] = {
            "backend": self.backend.name,
            "agent": self.agent,
            "task": self.task,
            "repetition": self.repetition,
            "seed": self.seed,
        }
        if self.variant:
            described["variant"] = self.variant_dict()
        return TraceCell.model_validate(described)

    def variant_dict(self) -> dict[str, Any]:
        """The axis values as path -> value."""
        return dict(self.variant)


def expand_tasks(entries: list[str | TaskFamily]) -> list[str]:
    """Task ids from ids, globs and families, in order, without duplicates.

    Raises:
        ConfigError: a glob that matches nothing, an unknown task/family value, or a
            trace-driven entry whose file is missing or wrong.
    """
    known = list_tasks()
    out: list[str] = []
    for index, entry in enumerate(entries):
        where = f"tasks.{index}"
        if isinstance(entry, str) and is_trace_driven(entry):
            out.extend(name for name in expand_workload_entry(entry, where) if name not in out)
            continue
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
        ConfigError: a bad task (see `expand_tasks`), an agent that cannot run a task
            (trace-driven tasks need the `workload` agent and simulated backends), or more
            cells than `max_cells` once globs expand.
    """
    tasks = expand_tasks(config.tasks)
    _check_trace_driven(config, tasks)
    reps = {t: _repetitions(config, t) for t in tasks}
    variants = expand_variants(config, config.axes, config.variants)
    count = sum(reps.values()) * len(config.agents) * len(config.backends) * len(variants)
    if count > config.max_cells:
        raise ConfigError(
            f"{count} cells (backends x agents x tasks x repetitions, globs expanded) is more "
            f"than max_cells={config.max_cells}; set max_cells to run that many",
            field="max_cells",
        )
    cells: list[Cell] = []
    for repetition in range(max(reps.values(), default=0)):
        for task in (t for t in tasks if repetition < reps[t]):
            for agent, backend, variant in itertools.product(
                config.agents, config.backends, variants
            ):
                agent_name = _agent_for(agent, task)
                slug = reference_slug(task) if is_trace_driven(task) else _slug(task)
                parts = [backend.name, agent_name, slug]
                parts += [axis_label(variant)] if variant else []
                cells.append(
                    Cell(
                        id="__".join([*parts, f"r{repetition}"]),
                        backend=apply_to_backend(backend, variant),
                        agent=agent_name,
                        task=task,
                        repetition=repetition,
                        seed=config.seed + repetition,
                        variant=variant,
                    )
                )
    return cells


def _repetitions(config: ExperimentConfig, task: str) -> int:
    """Repetitions of a task: `workload.repetitions` for trace-driven ones when set."""
    if is_trace_driven(task) and config.workload.repetitions is not None:
        return config.workload.repetitions
    return config.repetitions


def _agent_for(agent: str, task: str) -> str:
    """The agent of a cell: the named one, or for `auto` the task kind's (one registry)."""
    if agent != "auto":
        return agent
    if is_trace_driven(task):
        return "workload"
    return TASK_KIND_AGENTS[_task_kind(task)]


@functools.cache
def _task_kind(task: str) -> str:
    return load_task(task).spec.kind


def _check_trace_driven(config: ExperimentConfig, tasks: list[str]) -> None:
    driven = [t for t in tasks if is_trace_driven(t)]
    plain = [t for t in tasks if not is_trace_driven(t)]
    for agent in config.agents:
        if agent == "workload" and plain:
            raise ConfigError(
                f"the workload agent runs trace-driven tasks only, not {plain[0]!r}",
                field="agents",
                allowed=["auto", "coding", "computer_use"],
            )
        if agent in ("coding", "computer_use") and driven:
            raise ConfigError(
                f"{driven[0]!r} is a trace-driven task: it runs with the workload agent",
                field="agents",
                allowed=["auto", "workload"],
            )
    real = [b.name for b in config.backends if b.kind == "real"]
    if driven and real:
        raise ConfigError(
            f"trace-driven tasks need simulated backends (the simulator plays the shape); "
            f"{real[0]!r} is a real one",
            field="backends",
        )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-")
