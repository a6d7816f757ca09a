"""Bounded shutdown: SIGTERM on `looplab serve` / `looplab proxy` with a stream in flight.

A real server process paces a 400-token stream at 5 tok/s (80 s); SIGTERM after its first
chunk. The process must exit within its drain time (`--drain-s`, default 5 s) plus 3 s,
not when the stream ends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytestmark = [pytest.mark.reliability]

SLOW = ["-p", "fast-750", "--profile-set", "decode_tps=5", "--profile-set", "output_tokens=400"]


def _start(tmp_path: Path, name: str, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    """A looplab server process and its base URL, once its port file is written."""
    port_file = tmp_path / f"{name}.port"
    process = subprocess.Popen(
        [sys.executable, "-m", "looplab", *args, "--port", "0", "--port-file", str(port_file)],
        env={**os.environ, "LOOPLAB_LOG_FILE": os.devnull},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (port_file.exists() and port_file.read_text()):
        assert process.poll() is None, f"{name} exited {process.returncode}"
        assert time.monotonic() < deadline, f"{name} did not start"
        time.sleep(0.05)
    time.sleep(0.2)  # the port file is written just before the loop serves
    return process, f"http://127.0.0.1:{port_file.read_text().strip()}/v1"


def _stop_within(process: subprocess.Popen[bytes], base_url: str, limit_s: float) -> float:
    """Open a stream, SIGTERM after its first chunk; the seconds until the process exits."""
    body = {
        "model": "looplab-lorem",
        "stream": True,
        "max_tokens": 400,
        "messages": [{"role": "user", "content": "go"}],
    }
    with (
        httpx.Client(timeout=120) as client,
        client.stream("POST", f"{base_url}/chat/completions", json=body) as response,
    ):
        assert response.status_code == 200
        chunks = response.iter_lines()
        while not next(chunks).startswith("data: {"):
            pass
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=limit_s + 30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        return time.monotonic() - sent


def test_serve_drains_for_the_default_5_s_then_exits(tmp_path: Path) -> None:
    """`looplab serve` without --drain-s exits within 5 + 3 s of SIGTERM mid-stream."""
    process, url = _start(tmp_path, "serve", "serve", *SLOW)
    took = _stop_within(process, url, 8)
    assert took < 8, f"exited {took:.1f} s after SIGTERM"


def test_proxy_drains_for_drain_s_then_exits(tmp_path: Path) -> None:
    """`looplab proxy --drain-s 1` in front of serve exits within 1 + 3 s of SIGTERM."""
    upstream, upstream_url = _start(tmp_path, "upstream", "serve", "-p", "fast-750")
    try:
        proxy, url = _start(
            tmp_path, "proxy", "proxy", "--upstream", upstream_url, *SLOW, "--drain-s", "1"
        )
        took = _stop_within(proxy, url, 4)
        assert took < 4, f"exited {took:.1f} s after SIGTERM"
    finally:
        upstream.terminate()
        upstream.wait(timeout=30)
