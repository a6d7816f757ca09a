"""`looplab bench replay|clock|knobs|report|sandbox|browser|workload|scale`: the benches of the
run path (re-timing, the harness, the report, sandboxes, the browser, workloads, executors).
What each measures is in its module: `looplab.bench.replay`, `.sandbox`, `.browser`,
`.workload`, `.scale`, `.synthetic`."""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from looplab.console import (
    OutputOpt,
    SetOpt,
    err_console,
    out_console,
    parse_numbers,
    write_output,
)
from looplab.errors import ConfigError
from looplab.layout import ExperimentDir

__all__ = ["bench_clock_command", "bench_knobs_command", "bench_replay_command"]


def bench_replay_command(
    traces: Annotated[int, typer.Option(min=1, help="Synthetic traces to re-time.")] = 50,
    steps: Annotated[int, typer.Option(min=1, help="Steps per synthetic trace.")] = 200,
) -> None:
    """Re-timing throughput (sweep and full replay) and harness overhead per step."""
    from looplab.bench.replay import run_replay_bench

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
    from looplab.bench.replay import run_clock_bench

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


def bench_report_command(
    runs: Annotated[int, typer.Option(min=1, help="Synthetic runs in the experiment.")] = 1000,
    chain: Annotated[
        int, typer.Option(min=0, help="Also one run whose sub-runs nest this deep (0: not).")
    ] = 1100,
) -> None:
    """Time to write the HTML report of an experiment with RUNS synthetic runs (target:
    seconds), and of one run with a CHAIN-deep chain of sub-runs (every view walks each)."""
    from looplab.bench.subruns import chain_trace
    from looplab.bench.synthetic import write_synthetic_experiment
    from looplab.traces.io import write_trace

    with tempfile.TemporaryDirectory(prefix="looplab-bench-report-") as directory:
        experiment = write_synthetic_experiment(Path(directory) / "syn", runs)
        _time_report(f"{runs} runs", experiment, Path(directory))
        if chain:
            nested = Path(directory) / "chain"
            deep = chain_trace(chain)
            write_trace(nested / "t.jsonl", deep.header, deep.events)
            _time_report(f"one run, {chain} nested sub-runs", nested, Path(directory) / "c")


def _time_report(what: str, source: Path, out: Path) -> None:
    """Write the report of `source` three times; print the median, the least and its size."""
    from looplab.report.build import write_report

    times = [write_report([source], ExperimentDir(out).report).seconds for _ in range(3)]
    size_mb = ExperimentDir(out).report.stat().st_size / 1e6
    out_console().print(
        f"report of {what}: {statistics.median(times):.2f} s median of 3 "
        f"(min {min(times):.2f} s), {size_mb:.1f} MB"
    )


def bench_sandbox_command(
    kinds: Annotated[
        str, typer.Option(help="comma-separated kinds: local, docker, docker-api (baseline)")
    ] = "local,docker,docker-api",
    reps: Annotated[int, typer.Option(min=1, help="repetitions per operation")] = 50,
    output: OutputOpt = None,
) -> None:
    """Time create (cold, warm pool), exec, 4 KiB and 1 MiB file I/O and close per sandbox kind."""
    from looplab.bench.sandbox import OPERATIONS, run_bench_sync

    chosen = [kind.strip() for kind in kinds.split(",") if kind.strip()]
    report = run_bench_sync(chosen, reps)
    table = Table(title=f"sandbox latency, ms (p50 / p95 over {reps} reps)")
    table.add_column("operation")
    for kind in chosen:
        table.add_column(kind, justify="right")
    if {"docker", "local"} <= set(chosen):
        table.add_column("docker/local p50", justify="right")
    for op in OPERATIONS:
        row = [op]
        for kind in chosen:
            stats = report.kinds[kind][op]
            row.append(f"{stats.p50_ms:.2f} / {stats.p95_ms:.2f}")
        if {"docker", "local"} <= set(chosen):
            ratio = report.ratio("docker", "local", op)
            row.append("-" if ratio is None else f"{ratio:.1f}x")
        table.add_row(*row)
    console = out_console()
    console.print(table)
    for kind, description in report.descriptions.items():
        console.print(f"[dim]{kind}: {description}[/dim]")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = output or Path("bench-results") / f"sandbox-{stamp}.json"
    if write_output(path, json.dumps(report.to_json(), indent=2)):
        console.print(f"wrote {path}")


def bench_browser_command(
    reps: Annotated[int, typer.Option(min=1, help="repetitions per capture")] = 30,
) -> None:
    """What a trace screenshot and each observation kind (aria, screenshot, marks, dom)
    cost per browser action, beside the action's own snapshot."""
    from looplab.bench.browser import run_browser_bench
    from looplab.extras import require

    require("agents", "looplab bench browser")
    rows = run_browser_bench(reps)
    table = Table(title=f"browser captures on a 1280x800 page ({reps} reps)")
    for column in ("capture", "p50 ms", "p95 ms", "size p50"):
        table.add_column(column, justify="right")
    for row in rows:
        size = (
            f"{row.bytes_p50 / 1000:.1f} KB"
            if "screenshot" in row.name or "marks" in row.name
            else f"{row.bytes_p50:,} chars"
        )
        table.add_row(row.name, f"{row.p50_ms:.1f}", f"{row.p95_ms:.1f}", size)
    out_console().print(table)


def bench_workload_command(
    inputs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Recorded traces (files, directories, experiment dirs; `looplab import` "
            "converts other harnesses' runs). Default: from the shipped corpus, the shortest "
            "run of each harness.",
            show_default=False,
        ),
    ] = None,
    profiles: Annotated[
        str, typer.Option(help="Comma-separated latency presets (or profile YAML files).")
    ] = "slow-80,fast-750",
    tool_scale: Annotated[
        float,
        typer.Option(min=0.001, max=100, help="Tool-time factor, applied to live and predicted."),
    ] = 1.0,
    limit: Annotated[
        int, typer.Option(min=1, help="Run at most this many traces (the shortest recorded).")
    ] = 5,
    concurrency: Annotated[
        int | None,
        typer.Option(min=1, max=64, help="Runs at once (default: all).", show_default=False),
    ] = None,
    sandbox: Annotated[str, typer.Option(help="Sandbox kind: local or docker.")] = "local",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Keep the live runs in this directory.", show_default=False
        ),
    ] = None,
) -> None:
    """Trace-driven live runs vs virtual re-timing of the same traces (target <= 3% median).

    Each trace's shape runs live at every profile (wall clock, real sandbox, synthetic
    tools lasting the recorded times); the same trace is re-timed virtually at the same
    profile. Prints live and predicted task times, the difference, and its split into
    model, tools and other time per run; then the median and the worst case.
    """
    from looplab.extras import require

    require("agents", "looplab bench workload")
    require("store", "looplab bench workload")
    if sandbox not in ("local", "docker"):
        raise ConfigError(
            f"unknown sandbox {sandbox!r}", field="--sandbox", allowed=["local", "docker"]
        )
    from looplab.bench.workload import bench_traces, run_workload_bench

    names = [p.strip() for p in profiles.split(",") if p.strip()]
    if not names:
        raise ConfigError("give at least one profile", field="--profiles")
    traces, skipped = bench_traces(inputs, limit)
    err_console().print(
        f"running {len(traces)} trace(s) x {len(names)} profile(s) live: "
        + ", ".join(t.header.run_id[:24] for t in traces),
        highlight=False,
    )
    bench = run_workload_bench(
        traces,
        profiles=names,
        tool_scale=tool_scale,
        concurrency=concurrency,
        sandbox=sandbox,
        output=output,
    )
    bench.skipped = skipped
    _print_bench(bench, tool_scale)
    if bench.failed:
        err_console().print("[red]failed[/]: " + "; ".join(bench.failed[:5]), highlight=False)
        raise typer.Exit(1)


def _print_bench(bench: Any, tool_scale: float) -> None:
    table = Table(title=f"trace-driven live vs virtual re-timing (tool time x{tool_scale:g})")
    for column in (
        "run",
        "profile",
        "steps",
        "live s",
        "predicted s",
        "difference",
        "d model s",
        "d tools s",
        "d other s",
        "loop lag p99",
    ):
        table.add_column(column, justify="left" if column == "run" else "right")
    for row in bench.rows:
        live, predicted = row.live, row.predicted
        table.add_row(
            row.run[:40],
            row.profile,
            str(row.steps),
            f"{live.task_s:.2f}",
            f"{predicted.task_s:.2f}",
            f"{row.difference_pct:+.2f}%",
            f"{live.model_s - predicted.model_s:+.2f}",
            f"{live.tool_s - predicted.tool_s:+.2f}",
            f"{live.other_s - predicted.other_s:+.2f}",
            "-" if row.loop_lag_p99_ms is None else f"{row.loop_lag_p99_ms:.0f} ms",
        )
    console = out_console()
    console.print(table)
    if not bench.rows:
        return
    worst = max(bench.rows, key=lambda r: abs(r.difference_pct))
    console.print(
        f"median |difference| {bench.median_abs_pct():.2f}% (target <= 3%); worst "
        f"{worst.difference_pct:+.2f}% ({worst.run} at {worst.profile}: model "
        f"{worst.live.model_s - worst.predicted.model_s:+.2f} s, tools "
        f"{worst.live.tool_s - worst.predicted.tool_s:+.2f} s, other "
        f"{worst.live.other_s - worst.predicted.other_s:+.2f} s"
        + (f"; {'; '.join(worst.notes)}" if worst.notes else "")
        + ")",
        highlight=False,
    )
    for line in bench.skipped:
        console.print(f"skipped: {line}", highlight=False)
    if bench.directory is not None:
        console.print(f"live runs: {bench.directory}", highlight=False)


def bench_scale_command(
    cells: Annotated[int, typer.Option(min=1, help="Virtual-clock cells per mode.")] = 8,
    slots: Annotated[str, typer.Option(help="Comma-separated Ray slot counts.")] = "1,2,4",
    inprocess: Annotated[
        bool, typer.Option(help="Also run in-process (concurrency 1 and the most slots).")
    ] = True,
) -> None:
    """Cells per hour on the virtual clock: in-process and on a local Ray with N slots."""
    from looplab.bench.scale import measure_ray_overhead, run_scale_bench
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
