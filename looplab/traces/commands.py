"""`looplab import`, `looplab export otel|atif|mooncake|inference-perf`, `looplab schema`.

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
from looplab.latency.presets import served_profile
from looplab.traces.exporters.otel import export_otel_many
from looplab.traces.identity import assign_profile
from looplab.traces.importers import FORMATS, ImportedRun, import_runs, write_runs
from looplab.traces.inputs import load_traces
from looplab.traces.io import Trace

__all__ = [
    "ProfileOpt",
    "export_atif_command",
    "export_inference_perf_command",
    "export_mooncake_command",
    "export_otel_command",
    "import_command",
    "run_table",
    "schema_command",
]


ProfileOpt = Annotated[
    str | None,
    typer.Option(
        "--profile",
        "-p",
        help="The latency profile the runs were served at: a preset (slow-80, fast-750, "
        "...) or a profile YAML file. The report compares runs of one agent by it and "
        "prices them at its price entry; a name that is neither is an error.",
        show_default=False,
    ),
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
    profile: ProfileOpt = None,
) -> None:
    """Convert another harness's recorded runs into looplab traces, one file per run.

    Prints, per run, what could be recovered: steps, calls, tokens, and which times are
    measured, estimated (and how) or absent. -p names the latency profile the runs were
    served at, so the report compares them with runs of the same agent at another.
    """
    if output.exists() and not output.is_dir():
        raise ConfigError("exists and is not a directory", field="--output")
    served = served_profile(profile, "--profile") if profile is not None else None
    used, runs = import_runs(fmt, path)
    if served is not None:
        dumped = served.model_dump(mode="json", by_alias=True)
        for run in runs:
            how = "given with looplab import -p"
            assign_profile(run.header, served.name, served.decode_tps, how, dumped)
    console = out_console()
    for run, target in zip(runs, write_runs(runs, output), strict=True):
        console.print(run_table(run, target))
    console.print(f"{len(runs)} run(s) from {path} ({used}) -> {output}")


def run_table(run: ImportedRun, target: Path) -> Table:
    """What was recovered from one run, as printed by `looplab import` and `looplab collect`."""
    table = Table(title=f"{run.header.run_id} -> {target}", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("recovered", overflow="fold")
    if run.report.subruns:  # times on the critical path; total work its own row
        from looplab.analysis.pathsplit import keep_recorded, path_split

        split = path_split(run.events, keep_recorded)
        run.report.model_s, run.report.tool_s = split.path.model_s, split.path.tool_s
        run.report.task_s, run.report.work_s = split.task_s, split.work.total_s
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
    from looplab.traces.exporters.atif import ATIF_VERSION, export_atif

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


_Traces = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="[TRACES]",
        help="Trace files, trace directories or experiment directories.",
        show_default=False,
    ),
]
_Workload = Annotated[
    Path | None,
    typer.Option(
        "--workload",
        help="A workload model (YAML, `looplab calibrate`) to draw sessions from "
        "instead of traces; model calls timed at --profile.",
        show_default=False,
    ),
]
_Tasks = Annotated[int, typer.Option(min=1, help="Sessions drawn from --workload.")]
_Seed = Annotated[int, typer.Option(help="First draw's seed (--workload).")]
_Profile = Annotated[str, typer.Option("--profile", "-p", help="Profile timing drawn model calls.")]


def export_mooncake_command(
    inputs: _Traces = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The JSONL file to write (- = stdout).")
    ] = Path("-"),
    workload: _Workload = None,
    tasks: _Tasks = 10,
    seed: _Seed = 0,
    profile: _Profile = "fast-750",
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
    from looplab.traces.exporters.mooncake import mooncake_rows, mooncake_sessions

    traces = _session_traces(inputs, workload, tasks, seed, profile)
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


def export_inference_perf_command(
    inputs: _Traces = None,
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="Directory to write: sessions/session-NNNN.json (one Weka trace per "
            "session) and config.yml (reports go to reports/).",
        ),
    ] = Path("inference-perf"),
    workload: _Workload = None,
    tasks: _Tasks = 10,
    seed: _Seed = 0,
    profile: _Profile = "fast-750",
    block_tokens: Annotated[
        int, typer.Option("--block-tokens", min=1, help="Tokens per hash id block.")
    ] = 64,
    url: Annotated[
        str, typer.Option("--url", help="The server's base URL (without /v1), for config.yml.")
    ] = "http://127.0.0.1:8000",
    model: Annotated[
        str, typer.Option("--model", "-m", help="Model name sent in every request.")
    ] = "looplab-lorem",
    tokenizer: Annotated[
        str | None,
        typer.Option(
            "--tokenizer",
            help="HuggingFace tokenizer id or local directory inference-perf rebuilds "
            "prompts with (default: --model).",
            show_default=False,
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=0, help="Sessions active at once (0 = all).")
    ] = 0,
    max_wait_s: Annotated[
        float,
        typer.Option(
            "--max-wait-s",
            min=0.0,
            help="Cap on the agent's recorded time between a reply and its next call.",
        ),
    ] = 15.0,
) -> None:
    """Export traces (or sessions drawn from a workload model) for kubernetes-sigs
    inference-perf's agentic session replay (data weka_trace_replay, load
    trace_session_replay): one Weka trace JSON per session, a request per model call with
    its start, duration, token counts and prompt-prefix hash_ids (the agent's prefix reuse);
    plus a ready config.yml. Run it with `inference-perf --config_file DIR/config.yml`."""
    from looplab.traces.exporters.inference_perf import weka_sessions, write_replay

    if output.exists() and not output.is_dir():
        raise ConfigError("exists and is not a directory", field="--output")
    traces = _session_traces(inputs, workload, tasks, seed, profile)
    export = weka_sessions(traces, block_tokens=block_tokens)
    if not export.requests:
        raise ConfigError("no model call with a prompt token count to export", field="TRACES")
    config = write_replay(
        output,
        export,
        url=url,
        model=model,
        tokenizer=tokenizer or model,
        concurrency=concurrency,
        max_wait_s=max_wait_s,
    )
    reuse = export.reused_blocks / export.blocks if export.blocks else 0.0
    console = out_console()
    console.print(
        f"{len(export.sessions)} session(s), {export.requests} requests ({export.skipped} "
        f"without prompt tokens left out), {export.blocks} blocks, {reuse:.0%} reused -> "
        f"{config.parent / 'traces'}"
    )
    console.print(f"run: inference-perf --config_file {config}", soft_wrap=True)


def _session_traces(
    inputs: list[Path] | None, workload: Path | None, tasks: int, seed: int, profile: str
) -> list[Trace]:
    """The sessions a request-trace export reads: TRACES, or drawn from --workload."""
    if workload is not None and inputs:
        raise ConfigError("give TRACES or --workload, not both", field="--workload")
    if workload is None and not inputs:
        raise ConfigError("give TRACES or --workload MODEL.yaml", field="TRACES")
    if workload is not None:
        return _drawn_traces(workload, tasks, seed, profile)
    return load_traces(inputs or [])


def _drawn_traces(path: Path, tasks: int, seed: int, profile: str) -> list[Trace]:
    """`tasks` sessions drawn from a workload model (seeds `seed`...), their model calls
    re-timed at `profile` (the drawn shapes' calls take no time)."""
    from looplab.analysis.replay import replay_virtual
    from looplab.latency.presets import resolve_profile
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
    """Print the JSON Schema of one looplab-2 trace line (header or event)."""
    from looplab.traces.jsonschema import trace_json_schema

    text = json.dumps(trace_json_schema(), indent=2, sort_keys=True) + "\n"
    if write_output(output, text):
        out_console().print(f"schema: {output}")
