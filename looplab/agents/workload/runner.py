"""`run_workload_task`: one trace-driven task shape, live, through the shared agent loop.

Sandbox (an empty workspace) -> workload agent (synthetic tools named like the recorded
ones, a prompt padded to the recorded first prompt) -> the shared `AgentLoop` against
the backend, whose `workload` policy plays the shape -> the "check": did the run play
every step of the shape (a shape has no task to solve). The shape must already be
loaded into the simulator's `workload` policy (the experiment runner does it).

Limits: the loop may take as many steps as the shape has (a budget's `max_steps` never
cuts a shape short; token and wall-time budgets still apply), and replies are not capped
(`max_completion_tokens` unset: the recorded lengths are played as they were).
"""

from __future__ import annotations

import shutil
import time

from looplab.agents.config import AgentConfig
from looplab.agents.loop import AgentLoop
from looplab.agents.runner import TaskRun
from looplab.agents.workload.agent import SYSTEM_PROMPT, workload_prompt, workload_toolbox
from looplab.backends.client.client import InstrumentedClient
from looplab.config import replaced
from looplab.sandbox_contract import SandboxConfig, SandboxEvent
from looplab.sandboxes.factory import open_sandbox
from looplab.sandboxes.leftovers import owned_tempdir
from looplab.tasks import CheckResult
from looplab.tools.base import ToolContext
from looplab.tools.synthetic import SyntheticWork
from looplab.traces.end_reason import FINISHED_ENDS
from looplab.workloads.resolve import WorkloadSettings
from looplab.workloads.shape import TaskShape

__all__ = ["run_workload_task"]


async def run_workload_task(
    shape: TaskShape,
    client: InstrumentedClient,
    *,
    agent_config: AgentConfig | None = None,
    sandbox_config: SandboxConfig | None = None,
    settings: WorkloadSettings | None = None,
    task_name: str | None = None,
) -> TaskRun:
    """Play `shape` live (see the module docstring).

    Args:
        shape: the task shape (already scaled by `settings.tool_scale` if wanted).
        client: the backend; its model must be `looplab-workload` with the shape loaded.
        agent_config: loop settings (limits adjusted as the module docstring says).
        sandbox_config: sandbox kind and limits.
        settings: CPU share of the synthetic work, harness-time emulation.
        task_name: the task's name in the result (default: the shape's id).

    Raises:
        SandboxError, PrerequisiteError: the sandbox cannot start.
    """
    settings = settings or WorkloadSettings()
    config = _loop_config(agent_config or AgentConfig(), shape)
    workspace = owned_tempdir("looplab-workload-") / "workspace"  # prune finds it after kill -9
    workspace.mkdir()
    sink_target: list[AgentLoop] = []

    def sink(event: SandboxEvent) -> None:
        if sink_target:
            sink_target[0].record_sandbox_event(event)

    def harness_time(step: int) -> float:
        return shape.steps[step].other_s if step < len(shape.steps) else 0.0

    started = time.perf_counter()
    try:
        sandbox = await open_sandbox(
            sandbox_config or SandboxConfig(), workspace, sink=sink, run_id=shape.id
        )
    except BaseException:
        shutil.rmtree(workspace.parent, ignore_errors=True)
        raise
    try:
        sandbox_start_s = time.perf_counter() - started
        toolbox = workload_toolbox(shape, SyntheticWork(settings.cpu_share))
        context = ToolContext(sandbox=sandbox)
        loop = AgentLoop(
            client,
            toolbox,
            context,
            SYSTEM_PROMPT,
            config,
            harness_time_s=harness_time if settings.harness_time else None,
        )
        sink_target.append(loop)
        prompt = workload_prompt(shape, loop.system_prompt, toolbox.openai_tools())
        result = await loop.run(prompt)
        sink_target.clear()
    finally:
        await sandbox.close()
        shutil.rmtree(workspace.parent, ignore_errors=True)
    played = len(result.steps)
    complete = played == len(shape.steps) and result.end_reason in FINISHED_ENDS
    check = CheckResult(
        passed=complete,
        exit_code=0 if complete else 1,
        output=f"played {played} of {len(shape.steps)} step(s) of {shape.source}; "
        f"end reason {result.end_reason}",
    )
    return TaskRun(task_name or shape.id, result, check, sandbox_start_s, sandbox.description)


def _loop_config(base: AgentConfig, shape: TaskShape) -> AgentConfig:
    """The loop's settings for `shape`: as many steps as it has, uncapped replies, tools
    one after another; with drawn sub-agents, fan-out (delegate calls played concurrently,
    `agents/fanout.py`) and room for the longest sub-agent."""
    config = replaced(
        base, max_steps=len(shape.steps) + 1, max_completion_tokens=None, parallel_tool_calls=False
    )
    spawned = [len(sub) for step in shape.steps for sub in step.subagents]
    if spawned:
        config = replaced(config, fanout=True, subagent_max_steps=max(spawned) + 1)
    return config
