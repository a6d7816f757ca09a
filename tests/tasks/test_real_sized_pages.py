"""Real-sized web pages: a `looplab run` of a client-rendered task in real Chromium solves
it with 5k+ token snapshots; the apps' data latency is the task parameter."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from looplab.agents.services import start_services, stop_services
from looplab.tasks import load_task
from looplab.latency.tokens import default_tokenizer
from looplab.sandboxes.local import LocalSandbox
from looplab.traces.io import read_trace

FAST = {"decode_tps": 20000, "ttft_s": 0.0, "prefill_tps": None}
_TIMED_GET = """
import sys, time, urllib.request
started = time.perf_counter()
body = urllib.request.urlopen(sys.argv[1]).read().decode()
print(time.perf_counter() - started, "</html>" in body)
"""

REAL_SIZED = [
    "web/orders-admin",
    "web/help-center",
    "web/travel-search",
    "web/insurance-quote",
    "web/support-inbox",
]


@pytest.mark.browser
def test_looplab_run_solves_a_client_rendered_task_on_real_sized_snapshots(tmp_path: Path) -> None:
    """`looplab run` on web/support-inbox: solved, and every snapshot the agent read (list and
    ticket built by JavaScript from a 300 ms API) is 5k-25k o200k tokens."""
    config = {
        "name": "real-sized",
        "backends": [{"name": "fast", "profile": "fast-750", "overrides": FAST}],
        "tasks": ["web/support-inbox"],
        "repetitions": 1,
        "sandbox": {"kind": "local"},
        "output_dir": str(tmp_path / "out"),
    }
    path = tmp_path / "real-sized.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {**os.environ, "COLUMNS": "200", "LOOPLAB_LOG_FILE": os.devnull}
    command = [sys.executable, "-m", "looplab", "run", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [trace_file] = (tmp_path / "out" / "traces").glob("*.jsonl")
    trace = read_trace(trace_file)
    assert trace.end is not None and trace.end.success, trace.end
    tokenizer = default_tokenizer()
    sizes = [
        tokenizer.count(call.output)
        for call in trace.tool_calls()
        if call.output and "[ref=" in call.output
    ]
    assert len(sizes) >= 5, sizes
    assert all(5_000 <= size <= 25_000 for size in sizes), sizes


@pytest.mark.parametrize("name", REAL_SIZED)
def test_real_sized_tasks_take_their_latency_as_the_task_parameter(name: str) -> None:
    """`web/<id>-N` serves the app with N ms on its data endpoints; the default is 300."""
    task = load_task(name)
    assert task.parameter == 300 and "--latency-ms 300" in task.services[0].command
    slow = load_task(f"{name}-1200")
    assert "--latency-ms 1200" in slow.services[0].command
    assert "{latency_ms}" in task.spec.services[0].command


async def test_data_endpoints_answer_after_the_configured_latency() -> None:
    """web/orders-admin-1500: the order list (a data endpoint) takes at least 1.5 s, a page
    that is not one does not wait."""
    task = load_task("web/orders-admin-1500")
    workspace = task.build_workspace()
    async with await LocalSandbox.create(workspace) as sandbox:
        services = await start_services(sandbox, task.services)
        try:
            timings = {}
            for route in ("/orders", "/soon"):
                url = services.inside["app"] + route
                result = await sandbox.exec(shlex.join(["python3", "-c", _TIMED_GET, url]))
                assert result.ok, result.stderr
                seconds, whole = result.stdout.split()
                assert whole == "True"
                timings[route] = float(seconds)
        finally:
            await stop_services(sandbox, task.services)
    assert timings["/orders"] >= 1.5
    assert timings["/soon"] < 1.5
