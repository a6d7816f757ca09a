"""`looplab bench scale`: the executors' throughput on this machine (`executors.bench`)."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.table import Table

from looplab.console import out_console, parse_numbers

__all__ = ["bench_scale_command"]


def bench_scale_command(
    cells: Annotated[int, typer.Option(min=1, help="Virtual-clock cells per mode.")] = 8,
    slots: Annotated[str, typer.Option(help="Comma-separated Ray slot counts.")] = "1,2,4",
    inprocess: Annotated[
        bool, typer.Option(help="Also run in-process (concurrency 1 and the most slots).")
    ] = True,
) -> None:
    """Cells per hour on the virtual clock: in-process and on a local Ray with N slots."""
    from looplab.experiments.executors.bench import measure_ray_overhead, run_scale_bench
    from looplab.extras import require

    require("ray", "looplab bench scale")
    require("agents", "looplab bench scale")
    counts = [int(n) for n in parse_numbers(slots, "--slots", int)]
    load_before = os.getloadavg()[0]
    rows = run_scale_bench(cells, counts, inprocess=inprocess)
    base = next((r for r in rows if r.mode == "ray local" and r.slots == min(counts)), rows[0])
    table = Table(title=f"looplab bench scale: {cells} virtual-clock cells, {os.cpu_count()} CPUs")
    for column in ("mode", "slots", "cells", "failed", "seconds", "cells/hour", "scaling", "ideal"):
        table.add_column(column, justify="right")
    for row in rows:
        scaling = row.cells_per_hour / base.cells_per_hour if base.cells_per_hour else 0.0
        table.add_row(
            row.mode,
            str(row.slots),
            str(row.cells),
            str(row.failed),
            f"{row.seconds:.1f}",
            f"{row.cells_per_hour:,.0f}",
            f"{scaling:.2f}x",
            f"{row.slots / base.slots:.0f}x" if row.mode == "ray local" else "",
        )
    console = out_console()
    console.print(table)
    console.print(
        f"load average (1 min) before {load_before:.2f}, after {os.getloadavg()[0]:.2f}: other "
        "load on the machine takes CPU from the cells and skews the scaling",
        highlight=False,
    )
    overhead = measure_ray_overhead()
    console.print(
        f"Ray itself: start {overhead.start_s:.2f} s, first task {overhead.first_task_s:.2f} s, "
        f"warm task {overhead.per_task_ms:.1f} ms (median), shutdown {overhead.shutdown_s:.2f} s",
        highlight=False,
    )
