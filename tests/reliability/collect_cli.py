"""A real `looplab collect` subprocess on loopback, and OTLP/JSON bodies to send it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2

JSON = {"content-type": "application/json"}
STARTED: list[Collect] = []
"""Every collector started; `reap()` kills those still running (a test's teardown)."""


def reap() -> None:
    """SIGKILL every collector a test left running."""
    while STARTED:
        collect = STARTED.pop()
        collect.client.close()
        if collect.process.poll() is None:
            collect.process.kill()
        collect.process.wait(timeout=30)
        for pipe in (collect.process.stdout, collect.process.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()


class Collect:
    """`looplab collect --port 0 -o OUT ARGS` started; `url`, `post`, `stop`, `kill`."""

    def __init__(self, out: Path, *args: str) -> None:
        self.out = out
        self.port_file = out.parent / f"port-{time.monotonic_ns()}"
        command = [sys.executable, "-m", "looplab", "collect", "-o", str(out), "--port", "0"]
        command += ["--port-file", str(self.port_file), *args]
        env = {**os.environ, "LOOPLAB_LOG_FILE": os.devnull}
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        deadline = time.monotonic() + 60
        while not self.port_file.exists() or not self.port_file.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"collect did not start: {self.process.communicate()}")
            time.sleep(0.02)
        STARTED.append(self)
        self.url = f"http://127.0.0.1:{self.port_file.read_text()}/v1/traces"
        self.client = httpx2.Client(timeout=120)

    def post(self, body: bytes | dict[str, Any], headers: dict[str, str] = JSON) -> Any:
        """POST one body (a dict is sent as JSON); the response."""
        content = json.dumps(body).encode() if isinstance(body, dict) else body
        return self.client.post(self.url, content=content, headers=headers)

    def stop(self, signal_number: int = 2, timeout: float = 120) -> tuple[int, str]:
        """Send the signal (SIGINT by default); exit code and stderr."""
        self.client.close()
        self.process.send_signal(signal_number)
        _, errors = self.process.communicate(timeout=timeout)
        return self.process.returncode, errors

    def kill(self) -> None:
        """SIGKILL and reap."""
        self.client.close()
        self.process.kill()
        self.process.communicate(timeout=30)


def span(
    trace: str, span_id: int, *, op: str = "chat", parent: int | None = 1, **attrs: Any
) -> dict[str, Any]:
    """One OTLP/JSON span now (`attrs`: raw AnyValue objects by key)."""
    start = int(datetime.now(UTC).timestamp() * 1e9) + span_id * 1000
    values = [{"key": "gen_ai.operation.name", "value": {"stringValue": op}}]
    values += [{"key": k.replace("__", "."), "value": v} for k, v in attrs.items()]
    out: dict[str, Any] = {
        "traceId": trace,
        "spanId": f"{span_id:016x}",
        "name": op,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 500),
        "attributes": values,
    }
    if parent is not None:
        out["parentSpanId"] = f"{parent:016x}"
    return out


def export(*spans: dict[str, Any]) -> dict[str, Any]:
    """An ExportTraceServiceRequest (OTLP/JSON) of `spans`."""
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": list(spans)}]}]}


def run_of(trace: str, calls: int = 2) -> dict[str, Any]:
    """A whole small run: root agent span 1, `calls` chat spans with tokens."""
    root = span(trace, 1, op="invoke_agent", parent=None)
    chats = [
        span(trace, 2 + n, gen_ai__usage__input_tokens={"intValue": str(10 + n)})
        for n in range(calls)
    ]
    return export(root, *chats)


def wait_for(predicate: Any, timeout: float = 60.0) -> bool:
    """Poll `predicate()` until true or `timeout`; its last value."""
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(predicate())
