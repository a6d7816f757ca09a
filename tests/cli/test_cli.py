"""The command line: --help everywhere, plain errors, and `looplab serve` for curl."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import typer.main

from looplab.cli.app import app
from looplab.cli.main import main


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "LOOPLAB_LOG_FILE": os.devnull}
    return subprocess.run(
        [sys.executable, "-m", "looplab", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def _command_paths() -> list[list[str]]:
    root = typer.main.get_command(app)
    paths: list[list[str]] = [[]]

    def walk(group: Any, prefix: list[str]) -> None:
        # typer may ship its own click: recognise groups by their `commands` mapping
        for name, command in group.commands.items():
            paths.append([*prefix, name])
            if hasattr(command, "commands"):
                walk(command, [*prefix, name])

    walk(root, [])
    return paths


@pytest.mark.parametrize("path", _command_paths(), ids=lambda p: " ".join(p) or "looplab")
def test_every_command_has_help(
    path: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command and group answers --help with a usage line and exit code 0, through
    the console entry point `main` (the one-command app it builds for that word), in this
    process: 44 interpreter starts cost ~40 s of CPU; `looplab --help` below and the lazy
    command tests (tests/cli/test_lazy_commands.py) start real processes."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("LOOPLAB_LOG_FILE", os.devnull)
    with pytest.raises(SystemExit) as ended:
        main([*path, "--help"])
    out = capsys.readouterr()
    assert ended.value.code == 0, out.err
    assert "Usage:" in out.out


def test_a_started_looplab_answers_help() -> None:
    """`python -m looplab --help` in a new process: a usage line and exit code 0."""
    result = _run("--help")
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout


def test_bad_profile_is_a_plain_error() -> None:
    """An unknown profile prints the allowed names without a traceback and exits 2."""
    result = _run("serve", "--profile", "warp-9")
    assert result.returncode == 2
    assert "unknown latency profile 'warp-9'" in result.stderr
    assert "fast-750" in result.stderr
    assert "Traceback" not in result.stderr


def test_profiles_lists_presets() -> None:
    """`looplab profiles` lists presets; `looplab profiles NAME` prints one as JSON."""
    listing = _run("profiles")
    assert "fast-750" in listing.stdout and "slow-80" in listing.stdout
    one = json.loads(_run("profiles", "sol-cerebras-750").stdout)
    assert one["pipeline_stages"] == 85


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_serve_answers_curl_with_streamed_tool_calls(tmp_path: Path) -> None:
    """`looplab serve` on a free port streams a tool-call completion to curl."""
    port_file = tmp_path / "port"
    server = subprocess.Popen(
        [sys.executable, "-m", "looplab", "--no-log-file", "serve", "--profile", "fast-750",
         "--port", "0", "--port-file", str(port_file),
         "--profile-set", "ttft_s=0", "--profile-set", "decode_tps=5000"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.perf_counter() + 30
        while not (port_file.exists() and port_file.read_text()):
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            assert time.perf_counter() < deadline
            time.sleep(0.05)
        tool = {"type": "object", "properties": {"path": {"type": "string"}}}
        body = {
            "model": "looplab-lorem",
            "stream": True,
            "messages": [{"role": "user", "content": "run the tests"}],
            "tools": [{"type": "function", "function": {"name": "run_tests", "parameters": tool}}],
        }
        url = f"http://127.0.0.1:{port_file.read_text()}/v1/chat/completions"
        for _ in range(50):  # uvicorn may need a moment after the port file appears
            command = ["curl", "-sN", url, "-H", "content-type: application/json"]
            result = subprocess.run(
                [*command, "-d", json.dumps(body)],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            if result.returncode == 0:
                break
            time.sleep(0.1)
        events = [e.removeprefix("data: ") for e in result.stdout.split("\n\n") if e]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(e) for e in events[:-1]]
        assert chunks[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "run_tests"
        assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    finally:
        server.terminate()
        server.wait(timeout=10)
        if server.stderr is not None:
            server.stderr.close()
