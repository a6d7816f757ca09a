#!/usr/bin/env python3
"""Measure the aria snapshots of web tasks as the agent sees them (tasks/README.md's table).

Usage: `.venv/bin/python scripts/measure-web-snapshots.py [TASK ...]` (default: every web
task). Each task's reference solution is played through the real agent loop (scripted
policy, in-process simulator at 20k tok/s, real Chromium); every tool result that holds a
snapshot is counted with the project's prompt tokenizer (o200k). Prints one Markdown row
per task: reference steps, snapshots, first, smallest, median and largest snapshot tokens,
and the task's wall time.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

from looplab.agents.runner import run_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.cli.logs import configure_logging
from looplab.latency.presets import resolve_profile
from looplab.latency.tokens import default_tokenizer
from looplab.tasks import list_tasks, load_task

FAST = ["ttft_s=0", "decode_tps=20000", "output_tokens=8", "prefill_tps=null"]


async def measure(name: str, server: SimulatorServer) -> str:
    """One Markdown row for the task `name`."""
    task = load_task(name)
    endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
    started = time.perf_counter()
    async with InstrumentedClient(endpoint) as client:
        run = await run_task(task, client)
    seconds = time.perf_counter() - started
    if not run.solved:
        raise SystemExit(f"{name}: the reference solution did not solve it: {run.check.output}")
    tokenizer = default_tokenizer()
    sizes = [
        tokenizer.count(str(message.get("content")))
        for message in run.result.messages
        if message.get("role") == "tool" and "[ref=" in str(message.get("content"))
    ]
    return (
        f"| {task.task_id} | {len(run.result.steps)} | {len(sizes)} | {sizes[0]:,} | "
        f"{min(sizes):,} | {round(statistics.median(sizes)):,} | {max(sizes):,} | {seconds:.1f} s |"
    )


async def main(names: list[str]) -> None:
    print("| task | steps | snapshots | first | smallest | median | largest | wall |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    with SimulatorServer(resolve_profile("fast-750", FAST)) as server:
        for name in names:
            print(await measure(name, server), flush=True)


if __name__ == "__main__":
    configure_logging("warning", None)
    asyncio.run(main(sys.argv[1:] or list_tasks("web")))
