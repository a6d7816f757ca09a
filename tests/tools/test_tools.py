"""Coding tools in a real LocalSandbox, and the ToolBox's handling of bad calls."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator

import pytest

from looplab.agents.coding.agent import coding_toolbox
from looplab.agents.services import start_services
from looplab.backends.policies.base import PolicyContext
from looplab.backends.policies.scripted import ScriptedPolicy
from looplab.backends.simulator.protocol import ChatRequest
from looplab.latency.presets import resolve_profile
from looplab.latency.tokens import default_tokenizer
from looplab.sandboxes.local import LocalSandbox
from looplab.tasks import ServiceSpec
from looplab.tools.base import ToolContext
from looplab.tools.tests import summarise_pytest


@pytest.fixture
async def context() -> AsyncIterator[ToolContext]:
    """A sandbox holding one small module and its test."""
    async with await LocalSandbox.create() as sandbox:
        await sandbox.write_file("mod.py", "def f():\n    return 1\n\n\ndef g():\n    return 1\n")
        await sandbox.write_file(
            "test_mod.py", "from mod import f\n\ndef test_f():\n    assert f() == 2\n"
        )
        await sandbox.write_file(".hidden/x.txt", "secret")
        yield ToolContext(sandbox=sandbox)


async def _call(context: ToolContext, name: str, **arguments: object) -> tuple[bool, str]:
    result = await coding_toolbox().call(name, json.dumps(arguments), context)
    return result.ok, result.content


async def test_edit_file_refuses_absent_and_ambiguous_matches(context: ToolContext) -> None:
    """edit_file changes nothing and says why when the old text is absent or not unique."""
    ok, text = await _call(context, "edit_file", path="mod.py", old_text="return 3", new_text="x")
    assert not ok and "not found" in text
    ok, text = await _call(context, "edit_file", path="mod.py", old_text="return 1", new_text="x")
    assert not ok and "occurs 2 times" in text
    ok, text = await _call(
        context,
        "edit_file",
        path="mod.py",
        old_text="f():\n    return 1",
        new_text="f():\n    return 2",
    )
    assert ok and "line 1" in text
    assert b"return 2" in await context.sandbox.read_file("mod.py")


async def test_read_file_ranges_and_list_files(context: ToolContext) -> None:
    """read_file returns the asked lines with a header; list_files hides dot folders."""
    ok, text = await _call(context, "read_file", path="mod.py", start_line=5, end_line=6)
    assert ok and text.startswith("mod.py (lines 5-6 of 6)") and "def g" in text
    ok, text = await _call(context, "list_files")
    assert ok and text.splitlines() == ["mod.py", "test_mod.py"]
    ok, text = await _call(context, "read_file", path="nope.py")
    assert not ok and "no such file" in text


async def test_run_tests_verdict_and_failure_excerpt(context: ToolContext) -> None:
    """run_tests starts with FAILED/PASSED and names the failing test."""
    ok, text = await _call(context, "run_tests")
    assert not ok and text.startswith("FAILED: 1 failed")
    assert "test_mod.py::test_f" in text and "assert 1 == 2" in text
    await context.sandbox.write_file("mod.py", "def f():\n    return 2\n")
    ok, text = await _call(context, "run_tests", keyword="test_f")
    assert ok and text.startswith("PASSED: 1 passed")


def test_summarise_pytest_without_summary_line() -> None:
    """A run that printed no summary still gets a verdict."""
    assert summarise_pytest("ImportError: boom", 4).startswith("FAILED: pytest exited 4")


async def test_toolbox_turns_bad_calls_into_errors(context: ToolContext) -> None:
    """Unknown tool, bad JSON, schema violations and paths outside the workspace: ERROR results."""
    box = coding_toolbox()
    for name, raw, needle in [
        ("nope", "{}", "unknown tool"),
        ("read_file", "{", "not valid JSON"),
        ("read_file", "[1]", "JSON object"),
        ("read_file", '{"path": "a", "extra": 1}', "schema"),
        ("read_file", '{"path": "../../etc/passwd"}', "SandboxError"),
    ]:
        result = await box.call(name, raw, context)
        assert not result.ok and result.content.startswith("ERROR:") and needle in result.content


async def test_browse_reads_a_page_served_inside_the_sandbox(context: ToolContext) -> None:
    """browse fetches from a server inside the (network-less) sandbox and returns text."""
    await context.sandbox.write_file(
        "site/index.html",
        "<html><body><h1>Title</h1><p>Hello <a href='/x'>link</a></p></body></html>",
    )
    spec = ServiceSpec(
        name="docs", command="python3 -m http.server {port} --bind 127.0.0.1 --directory site"
    )
    services = await start_services(context.sandbox, [spec])
    ok, text = await _call(context, "browse", url=services.inside["docs"] + "/index.html")
    assert ok and "# Title" in text and "Hello [link](/x)" in text
    ok, text = await _call(context, "browse", url=services.inside["docs"] + "/missing.html")
    assert not ok and "HTTP 404" in text


def _context() -> PolicyContext:
    profile = resolve_profile("fast-750", ["output_tokens=5"])
    return PolicyContext(profile, random.Random(0), default_tokenizer())


def test_scripted_policy_leaves_the_script_on_an_unexpected_result() -> None:
    """A tool result the script did not expect ends the script with a message, no tool calls."""
    from looplab.tasks import load_task

    task = load_task("coding/fix-pager")
    prompt = task.prompt({"docs": "http://127.0.0.1:9/"})
    policy = ScriptedPolicy()
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "x"},
        {"role": "user", "content": prompt},
    ]
    first = policy.reply(ChatRequest(model="m", messages=messages), _context())  # type: ignore[arg-type]
    assert [c.name for c in first.tool_calls] == ["read_file", "browse"]
    calls = [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in first.tool_calls
    ]
    messages.append({"role": "assistant", "content": None, "tool_calls": calls})
    messages.append({"role": "tool", "tool_call_id": calls[0]["id"], "content": "def paginate"})
    messages.append({"role": "tool", "tool_call_id": calls[1]["id"], "content": "404 not here"})
    reply = policy.reply(ChatRequest(model="m", messages=messages), _context())  # type: ignore[arg-type]
    assert not reply.tool_calls
    assert "left my script" in "".join(reply.content_pieces)


def test_scripted_policy_does_not_know_other_prompts() -> None:
    """An unknown prompt gets a plain answer, so any agent ends instead of looping."""
    request = ChatRequest(model="m", messages=[{"role": "user", "content": "write a poem"}])  # type: ignore[list-item]
    reply = ScriptedPolicy().reply(request, _context())
    assert not reply.tool_calls and "do not recognise" in "".join(reply.content_pieces)
