"""The synthetic work tool of trace-driven runs: real work in the real sandbox, for as long
as the recorded (or drawn) tool call lasted.

A trace-driven run's agent has one such tool per recorded tool name (`bash`,
`str_replace_editor`, ...), so traces keep the recorded names; every call is marked
`synthetic` in its trace event. Arguments (written by the simulator's `workload`
policy): `seconds`, `tokens`, and optionally `fail`, `final` and `wait`.

What a call does, and why:

- **work**: one `exec` in the task's sandbox (bubblewrap or Docker) that spends the
  time there: `timeout B sh -c 'while :; do :; done'` burns one CPU for `B = cpu_share x
  work` seconds, then `sleep` the rest. Sleep is the default (`cpu_share` 0): a recorded
  tool call's time was mostly waiting on something (a test run in a container, a
  network fetch, a build's I/O), and a sleeping sandbox lets concurrent runs keep their
  recorded tool times on a small machine; CPU burn reproduces the contention of
  CPU-bound tools instead. Either way the sandbox's process start, exec path and
  teardown are real.
- **duration**: the call as a whole (exec included) lasts `seconds`: the exec's own
  overhead (process start, bubblewrap or `docker exec`) is learned per run and taken off
  the command's time, and whatever is still missing when the exec returns is waited out
  on the host. A call shorter than the sandbox's exec floor lasts that floor.
  `seconds` 0 runs nothing (the `continue` stand-in of a step without tool call).
- **observation wait**: `wait` seconds (computer-use workloads: the page loading and the
  screenshot or DOM capture after an action) are waited out on the host after the work,
  inside the call: the browser waits, not the sandbox's CPU.
- **result**: a one-line summary followed by filler, exactly `tokens` tokens in the
  default tokenizer (the policy sizes it so the prompt grows as recorded); `fail`
  makes it an `ERROR:` result with ok=False; `final` ends the run after this step.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from looplab.latency.tokens import Tokenizer, default_tokenizer
from looplab.tools.base import FunctionTool, ToolContext, ToolResult, load_schemas

__all__ = ["SyntheticWork", "filler_text", "synthetic_tools"]

_SCHEMA = load_schemas(__file__)["synthetic"]
_INITIAL_OVERHEAD_S = 0.01
"""Exec overhead assumed before the first call of a run has measured it."""
_SMOOTHING = 0.5
"""Weight of the newest measurement in the overhead estimate."""


def filler_text(header: str, tokens: int, tokenizer: Tokenizer) -> str:
    """`header`, a newline and filler: exactly `tokens` tokens ("" for 0; the filler
    alone when the header does not fit)."""
    if tokens <= 0:
        return ""
    head = header + "\n"
    room = tokens - tokenizer.count(head)
    text = head + "x" + " x" * (room - 1) if room >= 1 else "x" + " x" * (tokens - 1)
    for _ in range(4):  # merges at the header boundary can shift the count by a token
        difference = tokens - tokenizer.count(text)
        if difference == 0:
            break
        text = text + " x" * difference if difference > 0 else text[: 2 * difference]
    return text


class SyntheticWork:
    """The work of one run's synthetic calls (it learns the sandbox's exec overhead).

    Args:
        cpu_share: share (0..1) of each call's work spent burning a CPU; the rest sleeps.
        tokenizer: counts the result's tokens (default: the simulator's).
    """

    def __init__(self, cpu_share: float = 0.0, tokenizer: Tokenizer | None = None) -> None:
        self.cpu_share = cpu_share
        self.tokenizer = tokenizer or default_tokenizer()
        self.overhead_s = _INITIAL_OVERHEAD_S

    def command(self, work_s: float) -> str:
        """The shell command that spends `work_s` seconds in the sandbox."""
        burn = work_s * self.cpu_share
        idle = work_s - burn
        parts = []
        if burn >= 0.001:
            parts.append(f"timeout {burn:.3f} sh -c 'while :; do :; done'")
        if idle >= 0.001:
            parts.append(f"sleep {idle:.3f}")
        return "; ".join(parts) or "true"

    async def run(self, name: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        """Do one call's work and answer (see the module docstring)."""
        seconds = float(arguments["seconds"])
        wait = float(arguments.get("wait", 0.0))
        fail = bool(arguments.get("fail", False))
        started = time.perf_counter()
        if seconds > 0:
            work = max(0.0, seconds - self.overhead_s)
            await context.sandbox.exec(self.command(work), timeout_s=seconds + 60.0)
            elapsed = time.perf_counter() - started
            measured = max(0.0, elapsed - work)
            self.overhead_s += _SMOOTHING * (measured - self.overhead_s)
            if seconds - elapsed > 0:
                await asyncio.sleep(seconds - elapsed)
        if wait > 0:
            await asyncio.sleep(wait)
        mode = "cpu+sleep" if self.cpu_share > 0 else "sleep"
        header = f"synthetic {name}: {seconds:.3f} s of work ({mode}) in the sandbox"
        if wait > 0:
            header += f", then {wait:.3f} s of observation wait"
        if fail:
            header = f"ERROR: {header}, reported as failed (the recorded call failed)"
        text = filler_text(header, int(arguments["tokens"]), self.tokenizer)
        return ToolResult(
            text, ok=not fail, finish=bool(arguments.get("final", False)), synthetic=True
        )


def synthetic_tools(names: list[str], work: SyntheticWork) -> list[FunctionTool]:
    """One synthetic tool per recorded tool name, all sharing `work`."""

    def tool(name: str) -> FunctionTool:
        async def call(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
            return await work.run(name, arguments, context)

        schema = {**_SCHEMA, "name": name}
        return FunctionTool(schema, call)

    return [tool(name) for name in names]
