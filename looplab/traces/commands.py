"""`looplab import`, `looplab export otel|atif|mooncake`, `looplab schema`.

Commands of the traces package; `looplab.cli.app` registers them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from looplab.console import out_console, write_output
from looplab.errors import ConfigError
from looplab.traces.importers import FORMATS, ImportedRun, import_runs, write_runs
from looplab.traces.inputs import load_traces
from looplab.traces.io import Trace
from looplab.traces.otel import export_otel_many

__all__ = [
    "export_atif_command",
    "export_mooncake_command",
    "export_otel_command",
    "import_command",
    "run_table",
    "schema_command",
]


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
    console = out_console()
    for run, target in zip(runs, write_runs(runs, output), strict=True):
        console.print(run_table(run, target))
    console.print(f"{len(runs)} run(s) from {path} ({used}) -> {output}")


def run_table(run: ImportedRun, target: Path) -> Table:
    """What was recovered from one run, as printed by `looplab import` and `looplab collect`."""
    table = Table(title=f"{run.header.run_id} -> {target}", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("recovered", overflow="fold")
    for what, value in run.report.rows():
        table.add_row(what, value)
    for note in run.report.notes:
        table.add_row("note", note)
    return table


def export_otel_command(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            metavar="TRACES", help="Trace files, trace directories or experiment directories."
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The OTLP JSON file to write (- = stdout).")
    ],
) -> None:
    """Export traces as OTLP JSON (OpenTelemetry GenAI conventions) for Jaeger/Phoenix."""
    traces = load_traces(inputs)
    if write_output(output, json.dumps(export_otel_many(traces))):
        spans = sum(1 + len(t.steps()) + len(t.model_calls()) + len(t.tool_calls()) for t in traces)
        out_console().print(f"{len(traces)} trace(s), {spans} spans -> {output}")


def export_atif_command(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            metavar="TRACES", help="Trace files, trace directories or experiment directories."
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="The file to write (- = stdout): one trace as an ATIF JSON document, "
            "several as JSON lines (one trajectory a line).",
        ),
    ],
) -> None:
    """Export traces as ATIF trajectories (Harbor's Agent Trajectory Interchange Format,
    RFC 0001); `looplab import atif` reads them back with their times and tokens."""
    from looplab.traces.atif import ATIF_VERSION, export_atif

    traces = load_traces(inputs)
    documents = [export_atif(t) for t in traces]
    if len(documents) == 1:
        text = json.dumps(documents[0], indent=1) + "\n"
    else:
        text = "".join(json.dumps(d) + "\n" for d in documents)
    if write_output(output, text):
        steps = sum(len(d["steps"]) for d in documents)
        out_console().print(
            f"{len(documents)} trace(s), {steps} ATIF steps ({ATIF_VERSION}) -> {output}"
        )


def export_mooncake_command(
    inputs: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[TRACES]",
            help="Trace files, trace directories or experiment directories.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The JSONL file to write (- = stdout).")
    ] = Path("-"),
    workload: Annotated[
        Path | None,
        typer.Option(
            "--workload",
            help="A workload model (YAML, `looplab calibrate`) to draw sessions from "
            "instead of traces; model calls timed at --profile.",
            show_default=False,
        ),
    ] = None,
    tasks: Annotated[int, typer.Option(min=1, help="Sessions drawn from --workload.")] = 10,
    seed: Annotated[int, typer.Option(help="First draw's seed (--workload).")] = 0,
    profile: Annotated[
        str, typer.Option("--profile", "-p", help="Profile timing drawn model calls.")
    ] = "fast-750",
    block_tokens: Annotated[
        int, typer.Option("--block-tokens", min=1, help="Tokens per hash id block.")
    ] = 512,
    stagger_s: Annotated[
        float,
        typer.Option(
            "--stagger-s", min=0.0, help="Seconds between one session's start and the next's."
        ),
    ] = 0.0,
    sessions: Annotated[
        bool,
        typer.Option(
            "--sessions",
            help="Closed-loop multi-turn sessions (session_id; delay = the agent's time "
            "between a reply and its next call; input_length = what each turn adds) "
            "instead of open-loop timestamped requests with hash_ids.",
        ),
    ] = False,
) -> None:
    """Export traces (or sessions drawn from a workload model) as a Mooncake-style request
    trace for serving benchmarks (AIPerf's mooncake_trace): one line per model call with
    timestamp (ms; tool gaps between calls kept), input_length, output_length and hash_ids
    (prompt-prefix blocks, shared where the agent's prompt reuses an earlier one's prefix);
    with --sessions, one closed-loop multi-turn session per trace."""
    from looplab.traces.mooncake import mooncake_rows, mooncake_sessions

    if workload is not None and inputs:
        raise ConfigError("give TRACES or --workload, not both", field="--workload")
    if workload is None and not inputs:
        raise ConfigError("give TRACES or --workload MODEL.yaml", field="TRACES")
    traces = (
        _drawn_traces(workload, tasks, seed, profile)
        if workload is not None
        else load_traces(inputs or [])
    )
    if sessions:
        export = mooncake_sessions(traces, stagger_s=stagger_s)
    else:
        export = mooncake_rows(traces, block_tokens=block_tokens, stagger_s=stagger_s)
    text = "".join(json.dumps(row) + "\n" for row in export.rows)
    if write_output(output, text):
        reuse = export.reused_blocks / export.blocks if export.blocks else 0.0
        shape = (
            f"{export.compacted} compacted prompts sent as 1-token turns"
            if sessions
            else f"{export.blocks} blocks, {reuse:.0%} reused"
        )
        out_console().print(
            f"{len(traces)} session(s), {len(export.rows)} requests ({export.skipped} without "
            f"prompt tokens left out), {shape} -> {output}"
        )


def _drawn_traces(path: Path, tasks: int, seed: int, profile: str) -> list[Trace]:
    """`tasks` sessions drawn from a workload model (seeds `seed`...), their model calls
    re-timed at `profile` (the drawn shapes' calls take no time)."""
    from looplab.backends.profiles.presets import resolve_profile
    from looplab.experiments.replay import replay_virtual
    from looplab.workloads.model import load_workload
    from looplab.workloads.sample import draw_shape
    from looplab.workloads.shape import shape_trace

    model = load_workload(path)
    timed = resolve_profile(profile, [])
    return [replay_virtual(shape_trace(draw_shape(model, seed + i)), timed) for i in range(tasks)]


def schema_command(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the schema (- = stdout).")
    ] = Path("-"),
) -> None:
    """Print the JSON Schema of one looplab-1 trace line (header or event)."""
    from looplab.traces.jsonschema import trace_json_schema

    text = json.dumps(trace_json_schema(), indent=2, sort_keys=True) + "\n"
    if write_output(output, text):
        out_console().print(f"schema: {output}")
