"""The coding agent's system prompt and tools: files, tests, shell, browse, finish."""

from __future__ import annotations

from typing import Literal

from looplab.tools.browse import browse_tools
from looplab.tools.files import file_tools
from looplab.tools.registry import ToolBox
from looplab.tools.shell import finish_tool, shell_tools
from looplab.tools.tests import test_tools

__all__ = ["SYSTEM_PROMPT", "coding_toolbox"]

SYSTEM_PROMPT = """\
You are a careful software engineer working in a sandboxed workspace that holds a small \
Python project. Use the tools to look at the files, read the documentation you are \
pointed to, edit the code and run the tests. Edit with edit_file (exact text, copied \
from read_file output) or write_file. Do not change the tests unless asked to. When the \
tests pass and the task is done, call finish with a one-sentence summary."""


def coding_toolbox(browse_via: Literal["sandbox", "browser"] = "sandbox") -> ToolBox:
    """list_files, read_file, write_file, edit_file, run_tests, run_shell, browse, finish."""
    return ToolBox(
        [
            *file_tools(),
            *test_tools(),
            *shell_tools(),
            *browse_tools(browse_via),
            finish_tool(),
        ]
    )
