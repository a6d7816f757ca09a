"""Sub-agents: the `delegate` tool of an agent running with `fanout: true`.

A `delegate` call hands a self-contained task to a sub-agent of a registered role
(`SUBAGENT_ROLES`: `search`, `test`, and `workload`, which plays a drawn sub-agent of a
trace-driven task): a fresh `AgentLoop` on the same backend and the same sandbox, with
its own conversation (the role's system prompt, the task as the user message), a subset
of the parent's tools, and the parent's limits cut to `subagent_max_steps`. Its tool
calls run in parallel. The parent's other calls of the same reply (more delegates
included) run concurrently with it (the parent's dispatcher runs a fan-out step's calls
at once), so sub-agents are parallel branches of the run. The call's result is the
sub-agent's final text; a sub-agent that ends any other way than with an answer or
`finish` is an `ERROR:` result.

Every sub-run is kept as a `SubRun` (`RunResult.subruns`): the spawning step, the role,
the task and the sub-agent's own `RunResult` with its steps' times.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from looplab.agents.config import AgentConfig
from looplab.agents.records import RunResult, SubRun
from looplab.config import replaced
from looplab.tools.base import FunctionTool, ToolContext, ToolResult
from looplab.tools.registry import ToolBox
from looplab.traces.end_reason import FINISHED_ENDS

__all__ = [
    "DELEGATE_SCHEMA",
    "SUBAGENT_ROLES",
    "Delegation",
    "SubagentRole",
    "delegate_tool",
    "subagent_config",
]


@dataclass(frozen=True)
class SubagentRole:
    """One kind of sub-agent: its instructions and which of the parent's tools it gets."""

    prompt: str
    tools: tuple[str, ...] | None
    """The parent's tools it gets, by name; None: all of them but `delegate`."""


SUBAGENT_ROLES: dict[str, SubagentRole] = {
    "search": SubagentRole(
        "You are a search sub-agent. Read what your task names, with parallel tool calls "
        "where you can, then answer with a short report; change nothing.",
        ("list_files", "read_file", "run_shell"),
    ),
    "test": SubagentRole(
        "You are a test sub-agent. Run the tests your task names, then answer with the "
        "verdict line and the failing tests; change nothing.",
        ("run_tests", "read_file"),
    ),
    "workload": SubagentRole(
        "You are a sub-agent of a trace-driven task: call the tools each step asks for.",
        None,
    ),
}
"""Role name -> role; a new role joins with one entry (the `delegate` schema lists them)."""

DELEGATE_SCHEMA: dict[str, Any] = {
    "name": "delegate",
    "description": (
        "Hand a self-contained task to a sub-agent that works concurrently on the same "
        "workspace with its own conversation; returns its final report. Several delegate "
        "calls in one reply run at the same time."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "role": {"type": "string", "enum": sorted(SUBAGENT_ROLES)},
            "task": {"type": "string", "minLength": 1},
        },
        "required": ["role", "task"],
        "additionalProperties": False,
    },
}
"""The `delegate` function's schema."""

RunSub = Callable[[str, str, ToolContext], Awaitable[tuple[str, str | None]]]
"""(role, task, context) -> (final text, error or None): runs one sub-agent."""


def delegate_tool(run_sub: RunSub) -> FunctionTool:
    """The `delegate` tool, running sub-agents through `run_sub` (the parent loop's)."""

    async def delegate(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        text, error = await run_sub(str(arguments["role"]), str(arguments["task"]), context)
        if error is not None:
            return ToolResult(f"ERROR: the sub-agent {error}", ok=False)
        return ToolResult(text)

    return FunctionTool(DELEGATE_SCHEMA, delegate)


class _SubLoop(Protocol):
    async def run(self, prompt: str) -> RunResult: ...


MakeLoop = Callable[[ToolBox, ToolContext, str, AgentConfig], _SubLoop]
"""(tools, context, system prompt, config) -> a sub-agent's loop (the parent's class)."""


def subagent_config(parent: AgentConfig) -> AgentConfig:
    """A sub-agent's settings: the parent's backend-facing ones, no fan-out or side calls,
    parallel tool calls, at most `subagent_max_steps` steps."""
    return replaced(
        parent,
        fanout=False,
        max_steps=parent.subagent_max_steps,
        parallel_tool_calls=True,
        planner=None,
        reflection=None,
        speculation=False,
        eager_sandbox=False,
        system_prompt=None,
    )


class Delegation:
    """The parent loop's sub-agents: the `delegate` tool and what its calls ran.

    Args:
        toolbox: the parent's tools (a role gets its named subset).
        config: the parent's settings (`subagent_config` derives the sub-agents').
        make_loop: builds a sub-agent's loop.
        spawning_step: the parent's step running now (its index).
    """

    def __init__(
        self,
        toolbox: ToolBox,
        config: AgentConfig,
        make_loop: MakeLoop,
        spawning_step: Callable[[], int],
    ) -> None:
        self._toolbox = toolbox
        self._config = subagent_config(config)
        self._make_loop = make_loop
        self._spawning_step = spawning_step
        self.subruns: list[SubRun] = []

    @property
    def tokens(self) -> int:
        """Prompt + completion tokens the sub-agents used."""
        return sum(s.result.tokens_used for s in self.subruns)

    def stats(self) -> dict[str, float]:
        """The run's `knob_stats` entries: `subagents` (sub-runs made)."""
        return {"subagents": float(len(self.subruns))}

    def tool(self) -> FunctionTool:
        """The `delegate` tool bound to this parent."""
        return delegate_tool(self.run)

    async def run(self, role: str, task: str, context: ToolContext) -> tuple[str, str | None]:
        """Run one sub-agent to its end; (final text, None) or (text, why it failed)."""
        spec = SUBAGENT_ROLES[role]  # the schema's enum admits only registered roles
        step = self._spawning_step()
        names = self._toolbox.names if spec.tools is None else spec.tools
        loop = self._make_loop(self._toolbox.subset(names), context, spec.prompt, self._config)
        result = await loop.run(task)
        self.subruns.append(SubRun(step=step, role=role, task=task, result=result))
        if result.end_reason not in FINISHED_ENDS:  # else its text is not the call's result
            return result.final_text, f"ended with {result.end_reason}: {result.error or ''}"
        return result.final_text, None
