"""File tools of the coding agent: list_files, read_file, write_file, edit_file.

All paths are workspace-relative and go through the sandbox's own file API, so a path
that leaves the workspace is refused by the sandbox (and becomes an error result).
"""

from __future__ import annotations

from typing import Any

from looplab.tools.base import FunctionTool, ToolContext, ToolResult, load_schemas

__all__ = ["edit_file", "file_tools", "list_files", "read_file", "write_file"]

_SCHEMAS = load_schemas(__file__)
MAX_LISTED = 500
"""Entries list_files returns before saying how many more there are."""


async def list_files(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """List files under `path` (default the root), hidden directories (`.x/`) left out."""
    path = str(arguments.get("path") or ".")
    try:
        names = await context.sandbox.list_files(path)
    except FileNotFoundError:
        return ToolResult(f"no such directory: {path}", ok=False)
    shown = [name for name in names if not any(part.startswith(".") for part in name.split("/"))]
    more = len(shown) - MAX_LISTED
    text = "\n".join(shown[:MAX_LISTED])
    if more > 0:
        text += f"\n[... {more} more files]"
    return ToolResult(text or "(no files)")


async def read_file(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """Return a file's text, or lines `start_line..end_line` of it, under a one-line header."""
    path = str(arguments["path"])
    try:
        data = await context.sandbox.read_file(path)
    except FileNotFoundError:
        return ToolResult(f"no such file: {path}", ok=False)
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    start = int(arguments.get("start_line", 1))
    end = min(int(arguments.get("end_line", len(lines))), len(lines))
    if lines and start > len(lines):
        return ToolResult(f"{path} has only {len(lines)} lines", ok=False)
    body = "".join(lines[start - 1 : end])
    return ToolResult(f"{path} (lines {start}-{end} of {len(lines)}):\n{body}")


async def write_file(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """Create or replace a file."""
    path = str(arguments["path"])
    content = str(arguments["content"])
    await context.sandbox.write_file(path, content)
    return ToolResult(f"wrote {path} ({len(content.splitlines())} lines)")


async def edit_file(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """Replace exactly one occurrence of `old_text`; refuse when absent or ambiguous."""
    path = str(arguments["path"])
    old, new = str(arguments["old_text"]), str(arguments["new_text"])
    try:
        text = (await context.sandbox.read_file(path)).decode("utf-8")
    except FileNotFoundError:
        return ToolResult(f"no such file: {path}", ok=False)
    count = text.count(old)
    if count == 0:
        return ToolResult(
            f"old_text not found in {path}: nothing changed (read the file and copy the text "
            "exactly, whitespace included)",
            ok=False,
        )
    if count > 1:
        return ToolResult(
            f"old_text occurs {count} times in {path}: nothing changed (include more "
            "surrounding lines so it matches once)",
            ok=False,
        )
    await context.sandbox.write_file(path, text.replace(old, new, 1))
    line = text[: text.index(old)].count("\n") + 1
    return ToolResult(f"edited {path} at line {line}")


def file_tools() -> list[FunctionTool]:
    """The four file tools."""
    functions = {
        "list_files": list_files,
        "read_file": read_file,
        "write_file": write_file,
        "edit_file": edit_file,
    }
    return [FunctionTool(_SCHEMAS[name], function) for name, function in functions.items()]
