"""`run_shell` (a command in the sandbox) and `finish` (end the session).

`finish` lives here because it is the one tool every agent shares and it needs no module
of its own: it only marks the result, the agent loop does the ending.
"""

from __future__ import annotations

from typing import Any

from looplab.tools.base import FunctionTool, ToolContext, ToolResult, load_schemas

__all__ = ["finish", "finish_tool", "run_shell", "shell_tools"]

_SCHEMAS = load_schemas(__file__)


async def run_shell(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """Run `command` with `sh -c`; a non-zero exit is a result with ok=False."""
    timeout = float(arguments.get("timeout_s", 60.0))
    result = await context.sandbox.exec(str(arguments["command"]), timeout_s=timeout)
    parts = [f"exit code {result.exit_code}" + (" (timed out)" if result.timed_out else "")]
    if result.stdout:
        parts.append(f"stdout:\n{result.stdout}")
    if result.stderr:
        parts.append(f"stderr:\n{result.stderr}")
    return ToolResult("\n".join(parts), ok=result.ok)


async def finish(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """Acknowledge the end of the session."""
    return ToolResult(f"finished: {arguments['summary']}", finish=True)


def shell_tools() -> list[FunctionTool]:
    """The run_shell tool."""
    return [FunctionTool(_SCHEMAS["run_shell"], run_shell)]


def finish_tool() -> FunctionTool:
    """The finish tool."""
    return FunctionTool(_SCHEMAS["finish"], finish)
