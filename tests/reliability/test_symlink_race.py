"""The local sandbox escape of the fourth campaign, raced for real: a process inside the
sandbox swaps a folder with a symlink to a host folder in a loop (`renameat2` with
RENAME_EXCHANGE), while the host-side file tools write and read through that folder.

Before the fix the host checked a path, then opened it as root: a write landed in the host
folder and a root-only host file was read within a few attempts. Now every file operation
is done by the helper inside the sandbox, as its user, beneath the workspace's directory fd
without following any symlink (`looplab.sandboxes._inside.open_beneath`), so nothing
outside the workspace is ever written or read: directly, through `looplab run` with a
model that asks for it, and through `looplab replay --mode live` of a crafted trace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from looplab.errors import SandboxError
from looplab.sandbox_contract import SandboxConfig
from looplab.sandboxes.local import LocalSandbox
from looplab.serving.appserver import AppServer

pytestmark = [pytest.mark.reliability, pytest.mark.bwrap]

SECRET = "HOST-SECRET-7f3c1a"
ATTEMPTS = 5000
"""Host-side writes and reads each in the direct race (before the fix, one try in three of
2,000 escaped, at the 1,169th read and the 1,233rd write; the two runs below escaped in
every try)."""
TOOL_ATTEMPTS = 40
"""Writes and reads each that the model asks for through `run` and `replay` (before the fix
both escaped in every try)."""

SWAPPER = (
    "import ctypes, os, time\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "end = time.monotonic() + 120\n"
    "libc.renameat2(-100, b'sub', -100, b'lnk', 2)\n"  # AT_FDCWD, RENAME_EXCHANGE
    "open('.swapping', 'w').close()\n"
    "while time.monotonic() < end:\n"
    "    libc.renameat2(-100, b'sub', -100, b'lnk', 2)\n"
)


def swapper_command(host_dir: Path) -> str:
    """The shell command that makes `sub` and `lnk -> host_dir`, starts swapping them (for
    two minutes, detached) and returns once the first swap is done (a loaded machine can
    take seconds to start Python), printing `started`."""
    quoted = SWAPPER.replace("'", "'\"'\"'")
    return (
        f"mkdir -p sub && ln -sfn {host_dir} lnk && "
        f"(setsid python3 -c '{quoted}' >/dev/null 2>&1 &) && "
        "for i in $(seq 600); do [ -e .swapping ] && break; sleep 0.05; done && "
        "[ -e .swapping ] && echo started"
    )


@pytest.fixture
def host_dir(tmp_path: Path) -> Path:
    """A host folder outside every workspace with a root-only (0600) secret in it."""
    folder = tmp_path / "host"
    folder.mkdir()
    secret = folder / "secret.txt"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    return folder


def assert_nothing_escaped(host_dir: Path, *searched: Path) -> None:
    """No file was written into the host folder; the secret is in no file under `searched`."""
    assert sorted(p.name for p in host_dir.iterdir()) == ["secret.txt"]
    for root in searched:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                assert SECRET.encode() not in path.read_bytes(), f"the secret is in {path}"


async def test_a_swapped_link_never_steers_a_host_side_write_or_read(host_dir: Path) -> None:
    """Thousands of writes and reads through a folder swapped with a link to the host: no
    write lands outside and no read returns the host's root-only file."""
    box = await LocalSandbox.create(config=SandboxConfig(isolation="bwrap"))
    landed = refused = 0
    try:
        started = await box.exec(swapper_command(host_dir))
        assert started.stdout.strip() == "started", started
        for attempt in range(ATTEMPTS):
            try:
                await box.write_file("sub/pwned.txt", f"attempt {attempt}")
                landed += 1
            except (SandboxError, FileNotFoundError):
                refused += 1
            try:
                data = await box.read_file("sub/secret.txt")
            except (SandboxError, FileNotFoundError):
                continue
            assert SECRET.encode() not in data
        assert not (host_dir / "pwned.txt").exists()
        inside = await box.exec("cat sub/pwned.txt lnk/pwned.txt 2>/dev/null; true")
    finally:
        await box.close()
    assert_nothing_escaped(host_dir)
    assert refused > 0 and landed > 0, (landed, refused)  # the race really ran both ways
    assert "attempt" in inside.stdout  # the writes that landed, landed in the workspace


def _reply(calls: list[dict[str, Any]] | None, text: str = "") -> dict[str, Any]:
    """One chat completion whose message asks for `calls` (or answers `text`)."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-race",
        "object": "chat.completion",
        "created": 0,
        "model": "racer",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def racing_calls(host_dir: Path) -> list[list[dict[str, Any]]]:
    """The model's replies: start the swapper, then alternate writes and reads through it."""

    def call(index: int, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        return {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }

    race = []
    for index in range(TOOL_ATTEMPTS):
        race.append(call(2 * index + 1, "write_file", {"path": "sub/pwned.txt", "content": "x"}))
        race.append(call(2 * index + 2, "read_file", {"path": "sub/secret.txt"}))
    return [[call(0, "run_shell", {"command": swapper_command(host_dir)})], race]


def _streamed(reply: dict[str, Any]) -> StreamingResponse:
    """The same reply as server-sent events, as the real backend asks for (`stream: true`)."""
    message = reply["choices"][0]["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message["content"]}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(message["tool_calls"])]
    base = {key: reply[key] for key in ("id", "created", "model")}
    chunks = [
        {**base, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]},
        {
            **base,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
            "usage": reply["usage"],
        },
    ]
    events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
    return StreamingResponse(iter(events), media_type="text/event-stream")


@pytest.fixture
def racing_model(host_dir: Path) -> Iterator[tuple[str, list[str]]]:
    """A model endpoint that plays `racing_calls`, then answers; it keeps every request body
    it was sent, so the test can look for the secret in them."""
    replies = racing_calls(host_dir)
    seen: list[str] = []

    async def chat(request: Request) -> Response:
        body = await request.body()
        seen.append(body.decode("utf-8", "replace"))
        sent = json.loads(body)
        asked = sum(m.get("role") == "assistant" for m in sent["messages"])
        reply = _reply(replies[asked]) if asked < len(replies) else _reply(None, "done")
        return _streamed(reply) if sent.get("stream") else JSONResponse(reply)

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    with AppServer(app, name="racing-model") as server:
        yield server.base_url, seen


def _looplab(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A real `looplab` process (its log file out of the way)."""
    env = {**os.environ, "LOOPLAB_LOG_FILE": os.devnull, "COLUMNS": "300"}
    return subprocess.run(
        [sys.executable, "-m", "looplab", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def test_run_with_a_racing_model_reaches_no_host_file(
    tmp_path: Path, host_dir: Path, racing_model: tuple[str, list[str]]
) -> None:
    """`looplab run`, `kind: real`, a model that races the tools: nothing written outside,
    the secret neither sent to the model nor stored in the trace."""
    base_url, seen = racing_model
    config = {
        "name": "race",
        "backends": [{"name": "api", "kind": "real", "base_url": base_url, "model": "racer"}],
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "exp"),
        "agent": {"retry": {"max_attempts": 1}},
        "budgets": {"max_steps": 4},
    }
    file = tmp_path / "race.yaml"
    file.write_text(yaml.safe_dump(config))
    done = _looplab("run", str(file))
    assert done.returncode == 0, done.stderr
    traces = list((tmp_path / "exp" / "traces").glob("*.jsonl"))
    assert len(traces) == 1
    tools = [json.loads(line) for line in traces[0].read_text().splitlines()]
    ran = [e for e in tools if e.get("kind") == "tool_call"]
    assert len(ran) >= 2 * TOOL_ATTEMPTS  # every racing call ran
    assert len(seen) >= 3
    assert not any(SECRET in body for body in seen)
    assert_nothing_escaped(host_dir, tmp_path / "exp")


def test_live_replay_of_a_racing_trace_reaches_no_host_file(tmp_path: Path, host_dir: Path) -> None:
    """`looplab replay --mode live` of a trace whose recorded replies race the tools."""
    fixture = Path(__file__).parents[1] / "fixtures" / "replay" / "fix-pager-scripted.jsonl"
    lines = fixture.read_text(encoding="utf-8").splitlines()
    start, race = racing_calls(host_dir)
    for index, line in enumerate(lines):
        event = json.loads(line)
        if event.get("kind") == "model_call" and (event.get("message") or {}).get("tool_calls"):
            event["message"]["tool_calls"] = [*start, *race]  # the first reply races
            lines[index] = json.dumps(event)
            break
    else:
        raise AssertionError("the fixture has no model call with tool calls")
    trace = tmp_path / "crafted.jsonl"
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = _looplab("replay", "--mode", "live", str(trace), "-o", str(tmp_path / "out"))
    assert "Traceback" not in done.stderr, done.stderr
    written = list((tmp_path / "out").rglob("*.jsonl"))
    assert written, done.stderr
    ran = [
        json.loads(line)
        for path in written
        for line in path.read_text().splitlines()
        if '"tool_call"' in line
    ]
    assert sum(e.get("name") == "read_file" for e in ran) >= TOOL_ATTEMPTS
    assert_nothing_escaped(host_dir, tmp_path / "out")
