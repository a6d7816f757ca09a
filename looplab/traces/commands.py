"""`looplab import ...` and `looplab export otel ...` (wired into looplab/cli.py).

`app` holds both commands for tests and standalone use; cli.py registers
`import_command` as the top-level `import` and `export_app` as the `export` group.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from looplab.errors import ConfigError
from looplab.traces.importers import FORMATS, ImportedRun, import_runs, write_runs
from looplab.traces.inputs import load_traces
from looplab.traces.otel import export_otel_many

__all__ = ["app", "export_app", "export_otel_command", "import_command"]

app = typer.Typer(help="Import other harnesses' runs; export traces.", no_args_is_help=True)
export_app = typer.Typer(help="Export traces to other tools' formats.", no_args_is_help=True)
app.add_typer(export_app, name="export")


def _console() -> Console:
    return Console(width=None if sys.stdout.isatty() else 120)


@app.command("import")
def import_command(
    fmt: Annotated[str, typer.Argument(metavar="FORMAT", help=f"One of: {', '.join(FORMATS)}.")],
    path: Annotated[Path, typer.Argument(metavar="PATH", help="The file another harness wrote.")],
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="Directory for the traces, one <source id>.<digest>.jsonl per run "
            "(re-importing a file rewrites its own traces, never another's).",
        ),
    ],
) -> None:
    """Convert another harness's recorded runs into looplab traces, one file per run.

    Prints, per run, what could be recovered: steps, calls, tokens, and which times are
    measured, estimated (and how) or absent.
    """
    if output.exists() and not output.is_dir():
        raise ConfigError("exists and is not a directory", field="--output")
    used, runs = import_runs(fmt, path)
    console = _console()
    for run, target in zip(runs, write_runs(runs, output), strict=True):
        console.print(_table(run, used, target))
    console.print(f"{len(runs)} run(s) from {path} ({used}) -> {output}")


def _table(run: ImportedRun, fmt: str, target: Path) -> Table:
    table = Table(title=f"{run.header.run_id} -> {target}", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("recovered", overflow="fold")
    for what, value in run.report.rows():
        table.add_row(what, value)
    for note in run.report.notes:
        table.add_row("note", note)
    return table


@export_app.command("otel")
def export_otel_command(
    source: Annotated[
        Path, typer.Argument(metavar="TRACE_OR_DIR", help="A trace, or a directory of them.")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="The OTLP JSON file to write.")],
) -> None:
    """Export traces as OTLP JSON (OpenTelemetry GenAI conventions) for Jaeger/Phoenix."""
    traces = load_traces([source])
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(export_otel_many(traces)), encoding="utf-8")
    spans = sum(1 + len(t.steps()) + len(t.model_calls()) + len(t.tool_calls()) for t in traces)
    _console().print(f"{len(traces)} trace(s), {spans} spans -> {output}")
