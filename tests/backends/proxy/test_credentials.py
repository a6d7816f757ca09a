"""Credentials pass through the proxy and are never written to disk or logs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import openai

from tests.backends.proxy.conftest import CapturingUpstream

SECRET = "sk-looplab-test-0123456789abcdefSECRET"


def _files_containing(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_key_reaches_upstream_and_nowhere_else(
    capturing_upstream: CapturingUpstream, tmp_path: Path
) -> None:
    """`looplab proxy --record` forwards the client's key; no file it writes holds it."""
    port_file, log, store = tmp_path / "port", tmp_path / "proxy.log", tmp_path / "rec"
    process = subprocess.Popen(
        [sys.executable, "-m", "looplab", "--log-level", "debug", "--log-file", str(log),
         "proxy", "--upstream", capturing_upstream.base_url, "--record", str(store),
         "--port", "0", "--port-file", str(port_file), "-p", "fast-750",
         "--profile-set", "ttft_s=0", "--profile-set", "prefill_tps=null"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.perf_counter() + 30
        while not (port_file.exists() and port_file.read_text()) and process.poll() is None:
            assert time.perf_counter() < deadline, "the proxy did not start"
            time.sleep(0.05)
        base = f"http://127.0.0.1:{port_file.read_text()}/v1"
        client = openai.OpenAI(base_url=base, api_key=SECRET, max_retries=0,
                               default_headers={"OpenAI-Organization": "org-looplab"})  # fmt: skip
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "y"}], stream=True
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "ok then"
        client.close()
    finally:
        process.terminate()
        output = process.communicate(timeout=20)[0].decode()
    assert [h["authorization"] for h in capturing_upstream.seen] == [f"Bearer {SECRET}"] * 2
    assert capturing_upstream.seen[0]["openai-organization"] == "org-looplab"
    assert len(list((store / "exchanges").glob("*.json"))) == 2
    assert log.exists() and "proxy.call" in log.read_text()
    assert _files_containing(tmp_path, SECRET) == []
    assert SECRET not in output


def test_api_key_env_replaces_the_clients_key(
    capturing_upstream: CapturingUpstream, tmp_path: Path
) -> None:
    """With --api-key-env the upstream gets that variable's key, not the client's."""
    from looplab.backends.proxy.app import ProxyServer
    from looplab.latency.presets import resolve_profile

    os.environ["LOOPLAB_TEST_UPSTREAM_KEY"] = SECRET
    try:
        key = os.environ["LOOPLAB_TEST_UPSTREAM_KEY"]
        with ProxyServer(resolve_profile("fast-750"), upstream=capturing_upstream.base_url,
                         api_key=key, record=tmp_path / "rec") as proxy:  # fmt: skip
            client = openai.OpenAI(base_url=proxy.base_url, api_key="client-key", max_retries=0)
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
            client.close()
    finally:
        del os.environ["LOOPLAB_TEST_UPSTREAM_KEY"]
    assert capturing_upstream.seen[-1]["authorization"] == f"Bearer {SECRET}"
    assert _files_containing(tmp_path, SECRET) == []
