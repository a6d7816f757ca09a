"""`looplab collect`: receive OTLP/HTTP traces on loopback and write one looplab trace per run.

The receiver (`receiver.py`) serves on its own thread; this command's loop hands each
finished trace to `draft_run` -> `build_run` -> `write_runs` (the import path: one trace
builder, atomic files, never another run's file replaced) and prints what was recovered,
as `looplab import` does. It ends on Ctrl-C (exit 130) or SIGTERM (143), after
`--until-idle` seconds without a request, or after `--max-runs` runs; every buffered trace
is written before it stops, and the port is closed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from looplab.console import err_console, out_console
from looplab.errors import ConfigError, TraceError
from looplab.extras import missing_extra_error
from looplab.traces.collect.receiver import Collector, FinishedTrace, receiver_app
from looplab.traces.collect.runs import draft_run
from looplab.traces.commands import PROFILE_ATTRIBUTE, ProfileOpt, run_table
from looplab.traces.identity import assign_profile
from looplab.traces.importers import write_runs
from looplab.traces.importers.build import build_run
from looplab.traces.importers.source import BadValue

if TYPE_CHECKING:
    from looplab.backends.simulator.inprocess import AppServer

__all__ = ["collect_command"]

_POLL_S = 0.1


def collect_command(
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="Directory for the traces, one <agent>-<trace id>.<digest>.jsonl per run.",
        ),
    ],
    port: Annotated[
        int,
        typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (4318: OTLP/HTTP's; 0: any free)."),
    ] = 4318,
    port_file: Annotated[
        Path | None,
        typer.Option(
            "--port-file",
            help="Write the bound port here once serving (for scripts).",
            show_default=False,
        ),
    ] = None,
    until_idle: Annotated[
        float | None,
        typer.Option(
            "--until-idle",
            min=0.0,
            help="Stop after this many seconds without a request.",
            show_default=False,
        ),
    ] = None,
    max_runs: Annotated[
        int | None,
        typer.Option(
            "--max-runs", min=1, help="Stop after writing this many runs.", show_default=False
        ),
    ] = None,
    settle_s: Annotated[
        float,
        typer.Option(
            "--settle-s",
            min=0.0,
            help="Seconds without a new span, after a trace's root span arrived, "
            "before its run is written.",
        ),
    ] = 2.0,
    max_body_mb: Annotated[
        float,
        typer.Option("--max-body-mb", min=0.001, help="Largest request body accepted (413 above)."),
    ] = 16.0,
    profile: ProfileOpt = None,
) -> None:
    """Receive OpenTelemetry traces (OTLP/HTTP, POST /v1/traces, protobuf or JSON, gzip)
    from an instrumented agent and write one looplab trace per agent run.

    Point the agent's exporter at it: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=
    http://127.0.0.1:4318/v1/traces. Understands the OpenTelemetry GenAI conventions,
    OpenInference (openai, OpenAI Agents SDK, LangChain) and OpenLLMetry. A run is one
    trace id; prints per run what was measured, estimated or absent. -p names the profile
    that served the calls; a `looplab.profile` span or resource attribute wins over it.
    """
    _require_proto()
    if output.exists() and not output.is_dir():
        raise ConfigError("exists and is not a directory", field="--output")
    collector = Collector(settle_s=settle_s)
    server = _start(collector, port, int(max_body_mb * 1024 * 1024))
    err_console().print(
        f"[bold]looplab collect[/] on http://127.0.0.1:{server.port}/v1/traces -> {output}"
    )
    if port_file is not None:
        port_file.write_text(str(server.port))
    written = 0
    try:
        written = _serve(collector, output, until_idle, max_runs, profile)
    finally:
        server.stop()
        written += _write(collector.drain(), output, profile)
        err_console().print(
            f"{written} run(s) from {collector.requests} request(s), {collector.spans} spans "
            f"({collector.refused} refused) -> {output}"
        )


def _start(collector: Collector, port: int, max_body_bytes: int) -> AppServer:
    """The receiver serving on 127.0.0.1:`port` in its own thread.

    Raises:
        ConfigError: the port cannot be bound (named, with the system's reason).
    """
    from looplab.backends.simulator.inprocess import AppServer

    server = AppServer(
        receiver_app(collector), port=port, name="looplab-collect", max_body_bytes=max_body_bytes
    )
    try:
        return server.start()
    except OSError as exc:
        raise ConfigError(f"cannot bind 127.0.0.1:{port}: {exc.strerror}", field="--port") from None


def _serve(
    collector: Collector,
    output: Path,
    until_idle: float | None,
    max_runs: int | None,
    profile: str | None,
) -> int:
    """Write finished runs until idle or enough runs (Ctrl-C raises through)."""
    written = 0
    while max_runs is None or written < max_runs:
        written += _write(collector.finished(), output, profile)
        idle = time.monotonic() - collector.last_request
        if until_idle is not None and idle >= until_idle and collector.pending() == 0:
            break
        if until_idle is not None and idle >= until_idle + collector.settle_s:
            break  # traces whose root never came are written by the drain
        time.sleep(_POLL_S)
    return written


def _write(traces: list[FinishedTrace], output: Path, profile: str | None) -> int:
    """Build and write each trace's run, print what was recovered; the count written."""
    console = out_console()
    written = 0
    for trace in traces:
        try:
            run = build_run(draft_run(trace.trace_id, trace.spans, trace.part))
        except (BadValue, TraceError) as exc:
            err_console().print(f"[bold red]trace {trace.trace_id} not written:[/] {exc}")
            continue
        said = _said_profile(trace)
        if said is not None:
            assign_profile(run.header, said, None, "the spans' looplab.profile attribute")
        elif profile is not None:
            assign_profile(run.header, profile, None, "given with looplab collect -p")
        (target,) = write_runs([run], output)
        console.print(run_table(run, target))
        written += 1
    return written


def _said_profile(trace: FinishedTrace) -> str | None:
    """The profile the spans name (`looplab.profile`, on a span or its resource)."""
    for span in trace.spans:
        for attributes in (span.attributes, span.resource):
            value = attributes.get(PROFILE_ATTRIBUTE)
            if isinstance(value, str) and value:
                return value
    return None


def _require_proto() -> None:
    """Protobuf bodies need opentelemetry-proto (the looplab[collect] extra)."""
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: F401
    except ModuleNotFoundError:
        raise missing_extra_error("collect", "looplab collect", "opentelemetry-proto") from None
