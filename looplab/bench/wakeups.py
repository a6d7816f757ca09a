"""`looplab bench timers`: how late a sleeping server wakes, stock asyncio vs `precise_loop`.

Every paced token and every TTFT is a timer: a server sleeps until the token is due.
The stock asyncio loop waits with epoll, whose timeout is whole milliseconds rounded
up, and Linux adds timer slack of 0.1% of a wait; `looplab.serving.timers`
waits in microseconds, in parts, polling the end of a long wait. This bench sleeps each
length `--reps` times on both loops, in this process one after the other, and prints the
median and p90 lateness (actual wake - due) and their ratio.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from looplab.console import OutputOpt, out_console, parse_numbers, write_output
from looplab.serving.timers import precise_loop
from looplab.stats.order import quantile

__all__ = ["bench_timers_command", "run_timer_bench"]

LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "stock asyncio": asyncio.new_event_loop,
    "precise_loop": precise_loop,
}


async def _lateness_us(delay_s: float, reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        due = time.monotonic() + delay_s
        await asyncio.sleep(delay_s)
        out.append((time.monotonic() - due) * 1e6)
    return out


def run_timer_bench(delays_s: list[float], reps: int) -> list[dict[str, Any]]:
    """Per sleep length and loop: p50 and p90 lateness in microseconds."""
    rows = []
    for delay in delays_s:
        for name, factory in LOOPS.items():
            with asyncio.Runner(loop_factory=factory) as runner:
                late = runner.run(_lateness_us(delay, reps))
            rows.append(
                {
                    "sleep_ms": delay * 1e3,
                    "loop": name,
                    "late_us_p50": statistics.median(late),
                    "late_us_p90": quantile(late, 0.9),
                    "early": sum(1 for x in late if x < 0),
                }
            )
    return rows


def bench_timers_command(
    sleeps_ms: Annotated[
        str, typer.Option(help="Comma-separated sleep lengths, ms (a token gap, a TTFT).")
    ] = "1.33,3.3,12.5,50,300",
    reps: Annotated[int, typer.Option(min=3, help="Sleeps per length and loop.")] = 15,
    output: OutputOpt = Path("bench-results/timers.json"),
) -> None:
    """How late a sleeper wakes on the stock asyncio loop vs looplab's precise loop (the
    one `serve` and `proxy` run on), per sleep length: p50/p90 lateness and the ratio."""
    delays = [x / 1e3 for x in parse_numbers(sleeps_ms, "--sleeps-ms", float)]
    rows = run_timer_bench(delays, reps)
    table = Table(title=f"looplab bench timers: lateness of a sleep, us ({reps} sleeps each)")
    for column in ("sleep ms", "loop", "late p50", "late p90", "early", "p50 stock/precise"):
        table.add_column(column, justify="right")
    for stock, precise in zip(rows[::2], rows[1::2], strict=True):
        ratio = stock["late_us_p50"] / max(precise["late_us_p50"], 1e-9)
        for row in (stock, precise):
            table.add_row(
                f"{row['sleep_ms']:g}",
                row["loop"],
                f"{row['late_us_p50']:.0f}",
                f"{row['late_us_p90']:.0f}",
                str(row["early"]),
                f"{ratio:.1f}x" if row is precise else "",
            )
    console = out_console()
    console.print(table)
    if output is not None and write_output(
        output, json.dumps({"reps": reps, "rows": rows}, indent=2)
    ):
        console.print(f"results: {output}")
