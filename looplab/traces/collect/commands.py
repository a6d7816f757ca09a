"""`looplab collect`: receive OTLP/HTTP traces on loopback and write one looplab trace per run.

The receiver (`receiver.py`) serves on its own thread; this command's loop hands each
finished trace to `draft_trace` (a CLI's own spans, else `draft_run`) -> `build_run` ->
`write_runs` (the import path: one trace builder, atomic files, never another run's file
replaced) and prints what was recovered, as `looplab import` does. Events on `/v1/logs`
go the same way by `telemetry.registry.build_events`. It ends on Ctrl-C (exit 130) or
SIGTERM (143), after `--until-idle` seconds without a request, or after `--max-runs` runs;
every buffered trace is written before it stops, and the port is closed.

Written once (see `journal.py`): at start it cleans the temporary files a killed writer
left, takes the directory's lock and writes what the journal holds unwritten; each run
written is marked in the journal. A run that cannot be written is said, and the command
then exits 1, never claiming success.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from looplab.console import err_console, out_console
from looplab.errors import ConfigError, TraceError
from looplab.extras import missing_extra_error
from looplab.latency.presets import served_profile
from looplab.latency.profile import LatencyProfile
from looplab.traces.collect.journal import Journal, clean_stale_temporaries
from looplab.traces.collect.metrics import MetricsCollector
from looplab.traces.collect.receiver import (
    MAX_SPANS,
    MAX_TRACE_SPANS,
    Collector,
    FinishedTrace,
    receiver_app,
)
from looplab.traces.collect.runs import assign_served_profile
from looplab.traces.collect.telemetry.events import EventCollector, FinishedEvents
from looplab.traces.collect.telemetry.registry import build_events
from looplab.traces.collect.telemetry.traces import draft_trace
from looplab.traces.commands import ProfileOpt, run_table
from looplab.traces.importers import write_runs
from looplab.traces.importers.build import build_run
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.source import BadValue
from looplab.workloads.metrics import metric_workloads
from looplab.workloads.model import dump_workload

if TYPE_CHECKING:
    from looplab.serving.appserver import AppServer

__all__ = ["collect_command"]

_POLL_S = 0.1

_SettleS = Annotated[
    float,
    typer.Option(
        "--settle-s",
        min=0.0,
        help="Seconds without a new span, after a trace's root span arrived, "
        "before its run is written.",
    ),
]

_MaxBodyMb = Annotated[
    float,
    typer.Option("--max-body-mb", min=0.001, help="Largest request body accepted (413 above)."),
]

_MaxTraceSpans = Annotated[
    int,
    typer.Option(
        "--max-trace-spans",
        min=1,
        help="Most spans buffered for one trace (a request past it: 413, said on stderr).",
    ),
]

_MaxSpans = Annotated[
    int,
    typer.Option(
        "--max-spans",
        min=1,
        help="Most spans buffered in all (a request past it: 503, retryable).",
    ),
]


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
    settle_s: _SettleS = 2.0,
    max_body_mb: _MaxBodyMb = 16.0,
    max_trace_spans: _MaxTraceSpans = MAX_TRACE_SPANS,
    max_spans: _MaxSpans = MAX_SPANS,
    profile: ProfileOpt = None,
) -> None:
    """Receive OpenTelemetry traces (OTLP/HTTP, POST /v1/traces, protobuf or JSON, gzip)
    from an instrumented agent, and the coding CLIs' events (POST /v1/logs: Claude Code,
    Codex, Gemini CLI), and write one looplab trace per agent run (per prompt or
    conversation for the CLIs).

    Point the agent's exporter at it: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=
    http://127.0.0.1:4318/v1/traces. Understands the OpenTelemetry GenAI conventions
    (invoke_agent / chat / execute_tool spans), OpenInference (AGENT / LLM / TOOL; its
    openai, OpenAI Agents SDK and LangChain instrumentations) and OpenLLMetry. A run is
    one trace id; prints per run what was measured, estimated or absent. -p names the
    profile that served the calls; a `looplab.profile` span or resource attribute wins over it.
    """
    _require_proto()
    if output.exists() and not output.is_dir():
        raise ConfigError("exists and is not a directory", field="--output")
    served = served_profile(profile, "--profile") if profile is not None else None
    collector = _collector(output, settle_s, max_trace_spans, max_spans)
    events = EventCollector(settle_s=collector.stale_s, max_events=max_spans)
    metrics = MetricsCollector()
    server = _start(collector, (events, metrics), port, int(max_body_mb * 1024 * 1024))
    err_console().print(
        f"[bold]looplab collect[/] on http://127.0.0.1:{server.port}/v1/traces, "
        f"/v1/logs and /v1/metrics -> {output}"
    )
    if port_file is not None:
        port_file.write_text(str(server.port))
    tally = _Tally(served)
    tally.events = events
    try:
        _serve(collector, output, until_idle, max_runs, tally)
    finally:
        server.stop()
        _finish(collector, output, tally)
        _write_workloads(metrics, output)
    if tally.failed:
        raise typer.Exit(1)


def _collector(output: Path, settle_s: float, max_trace_spans: int, max_spans: int) -> Collector:
    """The collector of `output`: its lock taken, stale temporaries removed, the journal's
    unwritten spans taken back.

    Raises:
        ConfigError: another collector holds `output`.
    """
    journal = Journal(output)
    journal.lock()
    for stale in clean_stale_temporaries(output):
        err_console().print(f"removed {stale.name} (a write cut off by a kill)")
    collector = Collector(
        settle_s=settle_s, max_trace_spans=max_trace_spans, max_spans=max_spans, journal=journal
    )
    recovered = collector.restore(journal.recover())
    if recovered:
        err_console().print(f"{recovered} journalled span(s) not yet written: taken back")
    return collector


def _finish(collector: Collector, output: Path, tally: _Tally) -> None:
    """At the end (signal or not): write what a signal cut off and every buffered trace,
    say the totals."""
    _write(collector.drain(), output, collector, tally)
    if tally.events is not None:
        _write_events(tally.events.drain(), output, tally)
        if tally.events.events or tally.events.ignored:
            err_console().print(
                f"{tally.events.events} event(s) of known CLIs, {tally.events.ignored} other "
                "event(s) ignored"
            )
    err_console().print(
        f"{tally.written} run(s) from {collector.requests} request(s), {collector.spans} "
        f"spans ({collector.refused} refused, {collector.duplicates} already taken) "
        f"-> {output}"
    )
    if tally.failed:
        err_console().print(f"[bold red]{tally.failed} run(s) not written[/] (said above)")


def _start(
    collector: Collector,
    others: tuple[EventCollector, MetricsCollector],
    port: int,
    max_body_bytes: int,
) -> AppServer:
    """The receiver serving on 127.0.0.1:`port` in its own thread, answering only requests
    whose Host header names it (`HostGuard`: no web page reaches it by DNS rebinding).

    Raises:
        ConfigError: the port cannot be bound (named, with the system's reason).
    """
    from looplab.serving.appserver import AppServer
    from looplab.serving.hosts import HostGuard

    host = "127.0.0.1"
    app = HostGuard(receiver_app(collector, *others), host)
    server = AppServer(
        app, host=host, port=port, name="looplab-collect", max_body_bytes=max_body_bytes
    )
    return server.start()


class _Tally:
    """Runs written and runs that could not be."""

    def __init__(self, profile: LatencyProfile | None = None) -> None:
        self.profile = profile
        """The profile given with -p (a span's `looplab.profile` wins over it)."""
        self.written = 0
        self.failed = 0
        self.queue: list[FinishedTrace] = []
        """Traces taken from the collector and not yet done (a signal may cut a batch)."""
        self.events: EventCollector | None = None
        """The coding CLIs' events (`/v1/logs`), written as their runs finish."""
        self.unmarked: dict[int, tuple[ImportedRun, Path]] = {}
        """Queued traces (by `id`) whose run is written but not yet marked in the journal:
        after a signal `_finish` only marks them (a 60k-span run is not built twice)."""


def _serve(
    collector: Collector,
    output: Path,
    until_idle: float | None,
    max_runs: int | None,
    tally: _Tally,
) -> None:
    """Write finished runs until idle or enough runs (Ctrl-C raises through)."""
    events = tally.events
    while max_runs is None or tally.written < max_runs:
        _write(collector.finished(), output, collector, tally)
        last = collector.last_request
        if events is not None:
            _write_events(events.finished(), output, tally)
            last = max(last, events.last_request)
        idle = time.monotonic() - last
        pending = collector.pending() + (events.pending() if events is not None else 0)
        if until_idle is not None and idle >= until_idle and pending == 0:
            break
        if until_idle is not None and idle >= until_idle + collector.settle_s:
            break  # traces whose root never came are written by the drain
        time.sleep(_POLL_S)


def _write(traces: list[FinishedTrace], output: Path, collector: Collector, tally: _Tally) -> None:
    """Build and write each trace's run, print what was recovered, mark it in the journal.

    The traces wait in `tally.queue` until written and marked, so a signal mid-batch leaves
    the rest there for `_finish` (a run cut off mid-write is written again, the same file;
    one written but not yet marked is only marked). A trace
    whose run cannot be built (damaged values) is said and marked too (its spans would fail
    again); one that cannot be written (disk) stays in the journal for the next start.
    Either counts as failed."""
    console = out_console()
    tally.queue.extend(traces)
    while tally.queue:
        trace = tally.queue[0]
        ids = {s.span_id for s in trace.spans}
        try:
            if id(trace) not in tally.unmarked:
                run = build_run(draft_trace(trace.trace_id, trace.spans, trace.part))
                assign_served_profile(run.header, trace, tally.profile)
                (target,) = write_runs([run], output)
                tally.unmarked[id(trace)] = (run, target)
            run, target = tally.unmarked[id(trace)]
        except (BadValue, TraceError, OSError, ValueError) as exc:  # UnicodeError: ValueError
            kept = isinstance(exc, OSError)
            err_console().print(
                f"[bold red]trace {trace.trace_id} not written:[/] {escape(str(exc))}"
                + (" (kept in the journal: the next start writes it)" if kept else "")
            )
            if not kept:
                _mark(collector, trace, ids)
            tally.queue.pop(0)
            tally.failed += 1
            continue
        # Marked before it leaves the queue: a signal between the write and the mark leaves
        # it queued (and in `unmarked`), so `_finish` marks it.
        _mark(collector, trace, ids)
        tally.queue.pop(0)
        del tally.unmarked[id(trace)]
        tally.written += 1
        console.print(run_table(run, target))


def _write_events(finished: list[FinishedEvents], output: Path, tally: _Tally) -> None:
    """Build and write each finished group of events' run, print what was recovered."""
    for group in finished:
        try:
            run = build_events(group.source, group.key, group.records, group.part)
            if tally.profile is not None:
                assign_served_profile(run.header, None, tally.profile)
            (target,) = write_runs([run], output)
        except (BadValue, TraceError, OSError, ValueError) as exc:
            err_console().print(
                f"[bold red]{group.source} run {group.key} not written:[/] {escape(str(exc))}"
            )
            tally.failed += 1
            continue
        tally.written += 1
        out_console().print(run_table(run, target))


def _write_workloads(metrics: MetricsCollector, output: Path) -> None:
    """Each service's metric histograms as a workload model, `<name>.workload.yaml`
    (`looplab.workloads.metrics`: distributions, not runs)."""
    for model in metric_workloads(metrics.histograms()):
        target = output / f"{model.name}.workload.yaml"
        try:
            output.mkdir(parents=True, exist_ok=True)
            target.write_text(dump_workload(model))
        except OSError as exc:
            err_console().print(f"[bold red]{target} not written:[/] {escape(str(exc))}")
            continue
        observed = [k for k, p in model.parameters if getattr(p, "distribution", None)]
        err_console().print(
            f"metrics -> {target} (observes {', '.join(observed) or 'no parameter'}; "
            f"{len(model.notes)} other metric(s) in its notes)"
        )


def _mark(collector: Collector, trace: FinishedTrace, ids: set[str]) -> None:
    """Say in the journal that this part is done (a failure to say so: written again)."""
    if collector.journal is None:
        return
    try:
        collector.journal.mark_written(trace.trace_id, trace.part, ids)
    except OSError as exc:
        err_console().print(
            f"[yellow]journal not updated for {trace.trace_id}:[/] {escape(str(exc))}"
        )


def _require_proto() -> None:
    """Protobuf bodies need opentelemetry-proto (the looplab[collect] extra)."""
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: F401
    except ModuleNotFoundError:
        raise missing_extra_error("collect", "looplab collect", "opentelemetry-proto") from None
