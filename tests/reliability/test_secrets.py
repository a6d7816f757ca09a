"""Secrets never leave memory: planted keys and URL passwords on disk and on screen.

An upstream that echoes the key it was sent in its 401 body (as some APIs do) sits behind
real `looplab wrap --record` and `looplab run` processes; every file they write and
everything they print is searched for the planted values. A password in an upstream URL
is refused by every entry point, without printing it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from looplab.backends.proxy.core import Proxy
from looplab.cli.main import main
from looplab.errors import ConfigError
from looplab.latency.presets import resolve_profile
from looplab.serving.appserver import AppServer

pytestmark = [pytest.mark.reliability]

PROXY_KEY = "PLANTEDproxy7Q2x9w"
"""Given to the proxy by `--api-key-env PLANTED_CRED` (a name the scrubber cannot guess)."""
CLIENT_KEY = "PLANTEDclient4K8m3v"
"""Sent by the wrapped agent itself in its Authorization header."""
PASSWORD = "PLANTEDpass5T1z6r"
"""A password in an upstream URL."""


def _echo_app() -> Starlette:
    """An upstream that answers 401 quoting the credentials it was sent."""

    async def chat(request: Request) -> Response:
        said = request.headers.get("authorization", "")
        error = {"message": f"Incorrect API key provided: {said}", "code": "invalid_api_key"}
        return JSONResponse({"error": error}, status_code=401, headers={"x-echo": said})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.fixture
def echo() -> Iterator[str]:
    """The echoing upstream's API root."""
    with AppServer(_echo_app(), name="echo-upstream") as server:
        yield server.base_url


def _env(tmp_path: Path) -> dict[str, str]:
    """The planted key in a variable; the log file where the search looks too."""
    log = str(tmp_path / "logs" / "looplab.log")
    return {**os.environ, "PLANTED_CRED": PROXY_KEY, "LOOPLAB_LOG_FILE": log}


CLIENT = (
    "import openai\n"
    "try:\n"
    f"    openai.OpenAI(api_key={CLIENT_KEY!r}, max_retries=0).chat.completions.create(\n"
    "        model='m', messages=[{'role': 'user', 'content': 'hi'}])\n"
    "except openai.APIStatusError as exc:\n"
    "    print('agent saw status', exc.status_code)\n"
)


def _leaks(roots: list[Path], outputs: list[str]) -> list[str]:
    """Where a planted value appears: files under `roots`, then the console outputs."""
    found = []
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                found += [f"{path}: {k}" for k in (PROXY_KEY, CLIENT_KEY) if k.encode() in data]
    for index, text in enumerate(outputs):
        found += [f"output {index}: {k}" for k in (PROXY_KEY, CLIENT_KEY) if k in text]
    return found


def _standalone_proxy(tmp_path: Path, echo: str) -> list[str]:
    """`looplab proxy --record` with the proxy key: one call with the client key, /health;
    returns its console output and the /health body."""
    port_file = tmp_path / "proxy.port"
    argv = [sys.executable, "-m", "looplab", "proxy", "--upstream", echo, "-p", "fast-750"]
    argv += ["--api-key-env", "PLANTED_CRED", "--record", str(tmp_path / "rec-standalone")]
    argv += ["--port", "0", "--port-file", str(port_file)]
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path)
    )
    try:
        deadline = time.perf_counter() + 60
        while not port_file.exists() or not port_file.read_text():
            assert process.poll() is None and time.perf_counter() < deadline
            time.sleep(0.05)
        base = f"http://127.0.0.1:{port_file.read_text()}"
        ask = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        headers = {"authorization": f"Bearer {CLIENT_KEY}"}
        answer = httpx2.post(f"{base}/v1/chat/completions", json=ask, headers=headers)
        assert answer.status_code == 401
        health = httpx2.get(f"{base}/health").text
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    return [health, out, err]


def test_planted_keys_reach_no_file_and_no_console(
    tmp_path: Path, echo: str, campaign: Any
) -> None:
    """wrap --record (proxy key and client key echoed back), proxy --record (and its
    /health) and run write, serve and print neither."""
    outputs: list[str] = []
    for extra, name in (([], "client"), (["--api-key-env", "PLANTED_CRED"], "proxy")):
        wrap = [sys.executable, "-m", "looplab", "wrap", "-p", "fast-750", "--upstream", echo]
        wrap += [*extra, "--record", str(tmp_path / f"rec-{name}"), "-o"]
        wrap += [str(tmp_path / f"wrap-{name}"), "--", sys.executable, "-c", CLIENT]
        done = subprocess.run(wrap, capture_output=True, text=True, env=_env(tmp_path), timeout=120)
        assert "agent saw status 401" in done.stdout, done.stderr
        outputs += [done.stdout, done.stderr]
    assert list((tmp_path / "rec-proxy" / "exchanges").glob("*.json"))  # 401s are recorded
    outputs += _standalone_proxy(tmp_path, echo)
    config = {
        "name": "secret",
        "backends": [
            {
                "name": "api",
                "kind": "real",
                "base_url": echo,
                "model": "m",
                "api_key_env": "PLANTED_CRED",
            }
        ],
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "run"),
        "sandbox": {"isolation": "none"},
        "agent": {"retry": {"max_attempts": 1}},
        "budgets": {"max_steps": 1},
    }
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(config))
    run = [sys.executable, "-m", "looplab", "run", str(tmp_path / "exp.yaml")]
    done = subprocess.run(run, capture_output=True, text=True, env=_env(tmp_path), timeout=120)
    outputs += [done.stdout, done.stderr]
    assert list((tmp_path / "run" / "traces").glob("*.jsonl")), done.stderr
    assert (tmp_path / "logs" / "looplab.log").stat().st_size > 0  # searched as well
    leaks = _leaks([tmp_path], outputs)
    campaign.add("secrets planted", 2)
    campaign.add("secrets found", len(leaks))
    assert leaks == []


def test_a_password_in_a_url_is_refused_without_printing_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """proxy, wrap, run (real backend, wrapped upstream) and Proxy() refuse user:password@."""
    url = f"http://user:{PASSWORD}@127.0.0.1:9/v1"
    config = {
        "name": "pw",
        "backends": [{"name": "api", "kind": "real", "base_url": url, "model": "m"}],
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "run"),
    }
    (tmp_path / "real.yaml").write_text(yaml.safe_dump(config))
    wrapped = {
        **config,
        "backends": [{"name": "sim", "profile": "fast-750"}],
        "wrapped": [{"name": "w", "command": ["true"], "upstream": url}],
        "agents": ["w"],
    }
    (tmp_path / "wrapped.yaml").write_text(yaml.safe_dump(wrapped))
    commands = [
        ["proxy", "--upstream", url, "-p", "fast-750"],
        ["wrap", "--upstream", url, "-p", "fast-750", "--", "true"],
        ["run", str(tmp_path / "real.yaml")],
        ["run", str(tmp_path / "wrapped.yaml")],
    ]
    for argv in commands:
        with pytest.raises(SystemExit) as stop:
            main(argv)
        said = capsys.readouterr()
        text = " ".join((said.out + said.err).split())
        assert stop.value.code == 2, (argv, text)
        assert "credentials in the URL" in text, (argv, text)
        assert PASSWORD not in text
    assert not (tmp_path / "run").exists()
    with pytest.raises(ConfigError) as refused:
        Proxy(resolve_profile("fast-750", []), upstream=url)
    assert PASSWORD not in str(refused.value)
