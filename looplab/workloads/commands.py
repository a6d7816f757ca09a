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

__all__ = ["calibrate_command"]


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
