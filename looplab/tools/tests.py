"""`run_tests`: pytest in the sandbox, summarised for a model.

The first line is the verdict the model (and the scripted policy) can rely on:
`PASSED: <pytest summary>` when pytest exits 0, else `FAILED: <pytest summary>`
(or `FAILED: pytest exited N` when it printed no summary, e.g. a collection error). Then
the `FAILED ...` lines of pytest's short summary and the failure sections, cut to a few
thousand characters.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from looplab.tools.base import FunctionTool, ToolContext, ToolResult, clip, load_schemas

__all__ = ["run_tests", "summarise_pytest", "test_tools"]

_SCHEMAS = load_schemas(__file__)
TEST_TIMEOUT_S = 300.0
"""Longest a test run may take before it is killed (slow suites are part of the tasks)."""
EXCERPT_CHARS = 4000
"""Failure text kept after the verdict."""
_SUMMARY = re.compile(
    r"^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed)|no tests ran).*?)\s*=*$",
    re.MULTILINE,
)


async def run_tests(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """Run pytest (quiet, short tracebacks, no cache) and return the summary."""
    argv = ["python3", "-m", "pytest", "-q", "--tb=short", "-rfE", "-p", "no:cacheprovider"]
    if arguments.get("keyword"):
        argv += ["-k", str(arguments["keyword"])]
    if arguments.get("path"):
        argv.append(str(arguments["path"]))
    result = await context.sandbox.exec(shlex.join(argv), timeout_s=TEST_TIMEOUT_S)
    if result.timed_out:
        return ToolResult(f"FAILED: the tests ran over {TEST_TIMEOUT_S:.0f} s and were killed")
    text = summarise_pytest(result.stdout + result.stderr, result.exit_code)
    return ToolResult(text, ok=result.exit_code == 0)


def summarise_pytest(output: str, exit_code: int) -> str:
    """Verdict line + failing tests + failure excerpts of a pytest run's output."""
    found = _SUMMARY.findall(output)
    summary = found[-1].strip() if found else f"pytest exited {exit_code}"
    verdict = "PASSED" if exit_code == 0 else "FAILED"
    lines = [f"{verdict}: {summary}"]
    if exit_code != 0:
        failing = [line for line in output.splitlines() if line.startswith(("FAILED", "ERROR"))]
        lines += failing[:30]
        marker = output.find("= FAILURES =")
        if marker < 0:
            marker = output.find("= ERRORS =")
        excerpt = output[marker:] if marker >= 0 else output[-EXCERPT_CHARS:]
        excerpt = excerpt.split("short test summary info")[0]
        lines.append(clip(excerpt.strip(), EXCERPT_CHARS))
    return "\n".join(lines)


def test_tools() -> list[FunctionTool]:
    """The run_tests tool."""
    return [FunctionTool(_SCHEMAS["run_tests"], run_tests)]
