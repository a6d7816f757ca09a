"""`looplab calibrate` and `looplab bench workload`.

Commands of the workloads package; `looplab.cli.app` registers them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from looplab.console import err_console, out_console, write_output
from looplab.errors import ConfigError

__all__ = ["bench_workload_command", "calibrate_command"]


def _number(value: float) -> str:
    if math.isnan(value):
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _fit_table(title: str, rows: list[Any], first: str, fitted: str) -> Table:
    table = Table(title=title)
    for column in (first, "per", "status", "n", "", "p10", "p50", "p90", "p99", "KS", "flags"):
        table.add_column(column, justify="left" if column in (first, "", "flags") else "right")
    for row in rows:
        ks = "-" if math.isnan(row.ks) else f"{row.ks:.3f}"
        head = [row.name, row.per, row.status, str(row.observations)]
        table.add_row(*head, "observed", *map(_number, row.observed), ks, ", ".join(row.flags))
        table.add_row("", "", "", "", fitted, *map(_number, row.fitted), "", "", end_section=True)
    return table


def calibrate_command(
    inputs: Annotated[
        list[Path], typer.Argument(help="Trace files, trace directories or experiment dirs.")
    ],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="The workload model YAML to write (- = stdout)."),
    ],
    name: Annotated[
        str | None,
        typer.Option(help="The workload's name (default: the output file's stem)."),
    ] = None,
    description: Annotated[str, typer.Option(help="One line on what it stands for.")] = "",
) -> None:
    """Fit a workload model from traces and print how well it fits.

    Per parameter: observed vs fitted p10/p50/p90/p99, the KS distance and flags (poor
    fit, few observations, estimated, absent); then per-task totals of tasks drawn from
    the model against the observed tasks. Each parameter keeps its provenance (measured,
    estimated or absent, and the source traces). Imported traces work as they are. When
    enough calls have measured token times, the recorded backend's serving curves (decode
    vs context, TTFT vs prompt) are printed as profile overrides too.
    """
    from looplab.traces.inputs import load_traces
    from looplab.workloads.fit import calibrate
    from looplab.workloads.model import dump_workload

    stdout = str(output) == "-"
    label = name or ("workload" if stdout else output.stem)
    if not label.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise ConfigError(f"{label!r}: use letters, digits, '.', '_' and '-'", field="--name")
    traces = load_traces(inputs)
    if not traces:
        raise ConfigError("no complete trace found", field="TRACES")
    result = calibrate(traces, label, description)
    if not result.model.fitted_from.traces:
        raise ConfigError(
            "no trace could be used: " + "; ".join(result.skipped[:3]), field="TRACES"
        )
    console: Console = err_console() if stdout else out_console()
    title = f"workload {label}: fit per parameter"
    console.print(_fit_table(title, result.parameters, "parameter", "fitted"))
    title = (
        "per task: observed tasks vs tasks drawn from the model (parameters drawn independently)"
    )
    console.print(_fit_table(title, result.totals, "total", "drawn"))
    for line in result.skipped:
        console.print(f"[yellow]skipped[/]: {line}", highlight=False)
    backend = _serving_fit(traces)
    for line in backend:
        console.print(line, highlight=False)
    result.model.notes.extend(backend)
    text = dump_workload(result.model)
    if write_output(output, text):
        console.print(
            f"workload model: {output} ({len(result.model.fitted_from.traces)} traces)",
            highlight=False,
        )


_TIMES = ("sent", "first_token", "last_token", "ttft_s", "decode_s")
_MIN_POINTS = 5


def _serving_fit(traces: list[Any]) -> list[str]:
    """The recorded backend's decode-vs-context and TTFT-vs-prompt fits (serving model),
    from calls whose token times were measured, as profile overrides; [] when too few."""
    from looplab.analysis.fit import (
        decode_points,
        fit_decode_vs_context,
        fit_ttft_vs_prompt,
        ttft_points,
    )

    calls = [
        c for t in traces for c in t.model_calls() if not any(key in c.estimated for key in _TIMES)
    ]
    lines = []
    decode, ttft = decode_points(calls), ttft_points(calls)
    if len(decode) >= _MIN_POINTS:
        fit = fit_decode_vs_context(decode)
        lines.append(
            f"recorded backend, decode vs context ({fit.points} measured calls, r2 "
            f"{fit.r2:.2f}): --profile-set " + " --profile-set ".join(fit.as_overrides())
        )
    if len(ttft) >= _MIN_POINTS:
        fitted = fit_ttft_vs_prompt(ttft)
        lines.append(
            f"recorded backend, TTFT vs prompt ({fitted.points} measured calls, r2 "
            f"{fitted.r2:.2f}): --profile-set " + " --profile-set ".join(fitted.as_overrides())
        )
    return lines


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
    from looplab.experiments.workload_bench import bench_traces, run_workload_bench

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
