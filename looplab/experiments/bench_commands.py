"""`looplab bench replay|clock|knobs`: the experiments package's benchmarks (commands;
`looplab.cli.app` registers them). What they measure is in `looplab.experiments.bench`."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from looplab.console import SetOpt, out_console
from looplab.errors import ConfigError

__all__ = ["bench_clock_command", "bench_knobs_command", "bench_replay_command"]


def bench_replay_command(
    traces: Annotated[int, typer.Option(min=1, help="Synthetic traces to re-time.")] = 50,
    steps: Annotated[int, typer.Option(min=1, help="Steps per synthetic trace.")] = 200,
) -> None:
    """Re-timing throughput (sweep and full replay) and harness overhead per step."""
    from looplab.experiments.bench import run_replay_bench

    result = run_replay_bench(traces, steps)
    table = Table(title="looplab bench replay")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("target", justify="right")
    table.add_row(
        "sweep re-timing (totals)", f"{result.sweep_steps_per_s:,.0f} steps/s", ">= 100,000"
    )
    table.add_row(
        "replay --mode virtual (full events)", f"{result.warp_steps_per_s:,.0f} steps/s", ""
    )
    table.add_row(
        f"harness overhead per step, p50 ({result.overhead_steps} steps)",
        f"{result.overhead_ms_p50:.2f} ms",
        "<= 3 ms",
    )
    table.add_row("harness overhead per step, p95", f"{result.overhead_ms_p95:.2f} ms", "")
    out_console().print(table)


def bench_clock_command(
    config: Annotated[
        Path, typer.Argument(help="Experiment to run twice (wall, then virtual clock).")
    ] = Path("experiments/configs/quickstart.yaml"),
    set_: SetOpt = None,
) -> None:
    """Virtual-clock task times against wall-clock ones, cell by cell (target: within 3%)."""
    _print_clock_bench(config, set_ or [])


def bench_knobs_command(set_: SetOpt = None) -> None:
    """The latency knobs on both clocks: a small subset of knobs.yaml (fix-pager, slow-80
    and fast-750, all knobs off and all on), virtual vs wall task times (target: 3%)."""
    from looplab.bundled import bundled_configs_dir

    _print_clock_bench(bundled_configs_dir() / "knobs-bench.yaml", set_ or [])


def _print_clock_bench(config: Path, set_: list[str]) -> None:
    from looplab.experiments.bench import run_clock_bench

    pairs = run_clock_bench(config, set_)
    if not pairs:
        raise ConfigError("no cell finished on both clocks", field="CONFIG")
    table = Table(title=f"wall vs virtual clock: {config}")
    for column in (
        "cell",
        "wall s",
        "virtual s",
        "difference",
        "tools' own change",
        "difference less it",
        "re-timed s",
        "difference",
    ):
        table.add_column(column, justify="right")
    for pair in pairs:
        retimed = pair.retimed_difference_pct
        retimed_s = "-" if pair.retimed_s is None else f"{pair.retimed_s:.2f}"
        table.add_row(
            pair.cell,
            f"{pair.wall_s:.2f}",
            f"{pair.virtual_s:.2f}",
            f"{pair.difference_pct:+.2f}%",
            f"{pair.tool_change_s:+.2f} s",
            f"{pair.tool_corrected_pct:+.2f}%",
            retimed_s,
            "-" if retimed is None else f"{retimed:+.2f}%",
        )
    console = out_console()
    console.print(table)
    median = statistics.median(abs(p.difference_pct) for p in pairs)
    worst = max(abs(p.difference_pct) for p in pairs)
    console.print(
        f"virtual clock: median |difference| {median:.2f}% (target <= 3%), worst {worst:.2f}%"
    )
    corrected = statistics.median(abs(p.tool_corrected_pct) for p in pairs)
    console.print(
        f"less the tools' own run-to-run change (machine load): median |difference| "
        f"{corrected:.2f}%"
    )
    retimed_pcts = [abs(d) for p in pairs if (d := p.retimed_difference_pct) is not None]
    if retimed_pcts:
        console.print(
            "virtual re-timing of the wall-clock runs: median |difference| "
            f"{statistics.median(retimed_pcts):.2f}% (target <= 3%), worst {max(retimed_pcts):.2f}%"
        )
