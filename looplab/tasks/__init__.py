"""The task format: `task.yaml` (`TaskSpec`), `solution.yaml` (`Solution`), placeholders,
parametric families, discovery of task directories, and trace-driven task names
(`trace:PATH`, `workload:PATH`, `workload/<id>`: `references.py`).

One home for tasks: the format, and a task as a runnable instance (`instance.py`: `Task`,
`load_task`, `CheckResult`: builds workspaces and checks runs), used by the agents and by the simulator's scripted policy
(`looplab.backends.policies.scripted`: recognises a task from its prompt and plays its
reference solution). The bundled tasks themselves are data (`tasks/`, found through
`looplab.bundled`).
"""

from __future__ import annotations

from looplab.tasks.discovery import (
    TaskDefinition,
    default_tasks_dir,
    list_tasks,
    read_all_tasks,
    read_task,
    resolve_task_name,
)
from looplab.tasks.instance import CheckResult, Task, load_task
from looplab.tasks.references import (
    TaskReference,
    is_trace_driven,
    list_workloads,
    parse_reference,
    reference_slug,
)
from looplab.tasks.solution import (
    FamilySpec,
    ScriptedCall,
    ScriptedStep,
    Solution,
    expand_solution,
    prompt_pattern,
    substitute,
)
from looplab.tasks.spec import CheckSpec, FamilyParameter, Limits, ServiceSpec, TaskSpec

__all__ = [
    "CheckResult",
    "CheckSpec",
    "FamilyParameter",
    "FamilySpec",
    "Limits",
    "ScriptedCall",
    "ScriptedStep",
    "ServiceSpec",
    "Solution",
    "Task",
    "TaskDefinition",
    "TaskReference",
    "TaskSpec",
    "default_tasks_dir",
    "expand_solution",
    "is_trace_driven",
    "list_tasks",
    "list_workloads",
    "load_task",
    "parse_reference",
    "prompt_pattern",
    "read_all_tasks",
    "read_task",
    "reference_slug",
    "resolve_task_name",
    "substitute",
]
