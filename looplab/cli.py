"""The `looplab` command line: the one place that configures logging, wires parts, prints.

Every command has `--help`. `ConfigError` and `PrerequisiteError` print their message and
fix without a traceback and exit with code 2.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import structlog
import typer
from rich.console import Console
from rich.table import Table

import looplab.sandboxes.cli as sandbox_cli
from looplab.agents import cli as agents_cli
from looplab.errors import ConfigError, LooplabError, PrerequisiteError
from looplab.report import commands as report_commands
from looplab.traces import commands as trace_commands

__all__ = ["app", "main"]

app = typer.Typer(
    name="looplab",
    help="Agent-loop latency lab: how per-step inference latency compounds across agent tasks.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
bench_app = typer.Typer(
    help="Benchmarks that print side-by-side numbers and write JSON.", no_args_is_help=True
)
app.add_typer(bench_app, name="bench")
app.add_typer(sandbox_cli.app, name="sandbox")
app.add_typer(agents_cli.app, name="agents")
app.command("import")(trace_commands.import_command)
app.add_typer(trace_commands.export_app, name="export")
app.command("report")(report_commands.report_command)
app.command("dashboard")(report_commands.dashboard_command)
bench_app.command("sandbox")(sandbox_cli.bench_sandbox_command)

# Wide enough for the benchmark tables when output goes to a file or CI log.
console = Console(width=None if sys.stdout.isatty() else 120)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 120)

DEFAULT_LOG_FILE = Path(os.environ.get("LOOPLAB_LOG_FILE", ".looplab/logs/looplab.jsonl"))


def configure_logging(level: str, log_file: Path | None) -> None:
    """Readable console logs on stderr and JSON lines in `log_file` (when given)."""
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    console_handler = logging.StreamHandler(sys.stderr)
    console_handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()),
            ],
            foreign_pre_chain=shared,
        )
    )
    console_handler.setLevel(level.upper())
    handlers: list[logging.Handler] = [console_handler]
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        file_handler = logging.FileHandler(log_file, encoding="utf-8")
        file_handler.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                processors=[
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.dict_tracebacks,
                    structlog.processors.JSONRenderer(),
                ],
                foreign_pre_chain=shared,
            )
        )
        file_handler.setLevel(logging.DEBUG)
        handlers.append(file_handler)
    root = logging.getLogger()
    root.handlers[:] = handlers
    root.setLevel(logging.DEBUG)
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


@app.callback()
def _root(
    log_level: Annotated[
        str, typer.Option("--log-level", help="Console log level: debug, info, warning, error.")
    ] = "warning",
    log_file: Annotated[
        Path | None,
        typer.Option("--log-file", help="JSON-lines log file (all levels).", show_default=False),
    ] = None,
    no_log_file: Annotated[
        bool, typer.Option("--no-log-file", help="Do not write the JSON log file.")
    ] = False,
) -> None:
    """Agent-loop latency lab. Logs go to stderr (readable) and a JSON-lines file."""
    if log_level.lower() not in {"debug", "info", "warning", "error"}:
        raise ConfigError(
            f"unknown log level {log_level!r}",
            field="--log-level",
            allowed=["debug", "info", "warning", "error"],
        )
    configure_logging(log_level, None if no_log_file else (log_file or DEFAULT_LOG_FILE))


# -- serve ------------------------------------------------------------------------------


@app.command()
def serve(
    profile: Annotated[
        str, typer.Option("--profile", "-p", help="Preset name or profile YAML file.")
    ] = "fast-750",
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set", "-s", help="Override a profile field: -s decode_tps=500 (repeatable)."
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to bind (0 = any free port).")
    ] = 8750,
    pacer: Annotated[
        str, typer.Option(help="Token pacer: 'schedule' (exact) or 'naive' (per-token sleep).")
    ] = "schedule",
    port_file: Annotated[
        Path | None,
        typer.Option(help="Write the bound port to this file once serving.", show_default=False),
    ] = None,
) -> None:
    """Serve the OpenAI-compatible simulator: POST /v1/chat/completions, GET /v1/models.

    Models: `looplab-lorem` (text of the profile's length, or tool calls when tools are
    given). Timing of any request: GET /v1/looplab/requests/{x-looplab-request-id}/timing.
    """
    import socket

    import uvicorn

    from looplab.backends.inprocess import uvicorn_config
    from looplab.backends.pacing import PACERS
    from looplab.backends.presets import resolve_profile
    from looplab.backends.simulator import Simulator

    if pacer not in PACERS:
        raise ConfigError(f"unknown pacer {pacer!r}", field="--pacer", allowed=list(PACERS))
    resolved = resolve_profile(profile, set_ or [])
    simulator = Simulator(resolved, pacer=pacer)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        raise ConfigError(f"cannot bind {host}:{port}: {exc.strerror}", field="--port") from None
    bound = sock.getsockname()[1]
    err_console.print(
        f"[bold]looplab simulator[/] profile [cyan]{resolved.name}[/] "
        f"({resolved.decode_tps:g} tok/s, TTFT {resolved.fixed_ttft_s() * 1000:.0f} ms, "
        f"pacer {pacer}, tokenizer {simulator.tokenizer.name}) on http://{host}:{bound}/v1"
    )
    if port_file is not None:
        port_file.write_text(str(bound))
    server = uvicorn.Server(uvicorn_config(simulator, host=host, port=bound))
    asyncio.run(server.serve(sockets=[sock]))


# -- profiles ---------------------------------------------------------------------------


@app.command()
def profiles(
    name: Annotated[str | None, typer.Argument(help="Show one preset in full.")] = None,
) -> None:
    """List the latency presets (or show one), with their sources and assumptions."""
    from looplab.backends.presets import PRESETS, resolve_profile

    if name is not None:
        console.print_json(json.dumps(resolve_profile(name).model_dump(mode="json", by_alias=True)))
        return
    table = Table(title="latency presets", show_lines=False)
    for column in ("name", "decode tok/s", "TTFT ms", "prefill tok/s", "source"):
        table.add_column(column, overflow="fold")
    for preset in PRESETS.values():
        table.add_row(
            preset.name,
            f"{preset.decode_tps:g}",
            f"{preset.fixed_ttft_s() * 1000:.0f}",
            "free" if preset.prefill_tps is None else f"{preset.prefill_tps:,.0f}",
            preset.source,
        )
    console.print(table)


# -- demo -------------------------------------------------------------------------------


@app.command()
def demo(
    tokens: Annotated[int, typer.Option(help="Output tokens per reply.")] = 400,
    steps: Annotated[int, typer.Option(help="Model calls per speed (a tiny agent loop).")] = 3,
) -> None:
    """Stream the same conversation at slow-80 and fast-750 and print measured timings."""
    from looplab.backends.client import EndpointConfig, InstrumentedClient, ModelResponse
    from looplab.backends.inprocess import SimulatorServer
    from looplab.backends.presets import resolve_profile

    async def one_speed(preset: str) -> list[ModelResponse]:
        profile = resolve_profile(preset, [f"output_tokens={tokens}"])
        responses: list[ModelResponse] = []
        async with SimulatorServer(profile) as server:
            endpoint = EndpointConfig(base_url=server.base_url, model="looplab-lorem")
            async with InstrumentedClient(endpoint) as client:
                messages: list[dict[str, Any]] = [
                    {"role": "system", "content": "You are a coding agent."},
                    {"role": "user", "content": "Explain the failing test, then fix it."},
                ]
                for _ in range(steps):
                    response = await client.complete(messages)
                    responses.append(response)
                    messages += [response.message, {"role": "user", "content": "Go on."}]
        return responses

    table = Table(title=f"same {steps}-call conversation, {tokens} output tokens per call")
    for column in (
        "profile",
        "call",
        "TTFT ms",
        "decode tok/s",
        "model s",
        "cached/prompt",
        "chunks",
    ):
        table.add_column(column, justify="right")
    totals: dict[str, float] = {}
    for preset in ("slow-80", "fast-750"):
        responses = asyncio.run(one_speed(preset))
        for index, r in enumerate(responses):
            table.add_row(
                preset,
                str(index + 1),
                f"{(r.timing.ttft_s or 0) * 1000:.1f}",
                f"{r.decode_rate_tps or 0:.1f}",
                f"{r.timing.model_s or 0:.2f}",
                f"{r.cached_tokens}/{r.prompt_tokens}",
                str(r.visible_chunks),
            )
        totals[preset] = sum(r.timing.model_s or 0 for r in responses)
    console.print(table)
    ratio = totals["slow-80"] / totals["fast-750"]
    console.print(
        f"model time: slow-80 {totals['slow-80']:.2f} s, fast-750 {totals['fast-750']:.2f} s "
        f"-> {ratio:.1f}x faster for a {750 / 80:.1f}x faster decode "
        "(TTFT and prefill do not shrink; tools, added by later work, will not either)."
    )


# -- run ----------------------------------------------------------------------------------


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="Experiment YAML (experiments/configs/*.yaml).")],
    override: Annotated[
        list[str] | None,
        typer.Option("--config-override", "-c", help="key.path=value, applied before validation."),
    ] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Discard earlier results in the output directory.")
    ] = False,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume/--no-resume",
            help="Run only the missing cells of an earlier, interrupted invocation (default).",
        ),
    ] = True,
) -> None:
    """Run an experiment: every backend x agent x task x repetition, traced and indexed.

    Re-running the same config resumes: complete cells are kept, cut-off ones rerun.
    """
    from looplab.config import load_model
    from looplab.experiments.config import ExperimentConfig
    from looplab.experiments.runner import ExperimentRunner
    from looplab.report.model import load_runs
    from looplab.report.views import headline

    experiment = load_model(ExperimentConfig, config, override or [])
    runner = ExperimentRunner(experiment, progress=RunProgress())
    runner.prepare_directory(fresh=fresh or not resume)
    err_console.print(
        f"[bold]{experiment.name}[/]: output {runner.directory} "
        f"(clock {experiment.clock}, sandbox {experiment.sandbox.kind}, "
        f"concurrency {experiment.concurrency})"
    )
    result = asyncio.run(runner.run())
    failed = [o for o in result.outcomes if o.status == "failed"]
    _print_summary(headline(load_runs([result.directory / "traces"])))
    console.print(f"results: {result.directory} (traces/, results.duckdb)")
    if failed:
        err_console.print(
            f"[red]{len(failed)} cell(s) failed[/]: "
            + "; ".join(f"{o.cell.id}: {o.error}" for o in failed[:5])
        )
        raise typer.Exit(1)


SATURATION_LAG_MS = 20.0
"""Event-loop lag (p99) above which a run's timings are flagged as suspect."""


class RunProgress:
    """Prints one line per finished cell, with elapsed time and an ETA from the runs so far."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.ran = 0

    def __call__(self, outcome: Any, done: int, total: int) -> None:
        cell = outcome.cell
        if outcome.status == "skipped":
            err_console.print(
                f"[dim]{done}/{total} {cell.id}: complete trace found, skipped[/]", highlight=False
            )
            return
        self.ran += 1
        elapsed = time.perf_counter() - self.started
        remaining = total - done
        eta = f", ETA {elapsed / self.ran * remaining:.0f} s" if remaining else ""
        clock = f"[dim][{elapsed:6.1f} s{eta}][/] "
        if outcome.status == "failed":
            line = f"[red]{done}/{total} {cell.id}: failed: {outcome.error}[/]"
        else:
            verdict = "solved" if outcome.success else "NOT solved"
            line = (
                f"{done}/{total} {cell.id}: {outcome.steps} steps, "
                f"{outcome.task_s:.2f} s, {verdict}"
            )
            lag = outcome.loop_lag_p99_ms
            if lag is not None and lag > SATURATION_LAG_MS:
                line += (
                    f" [yellow](event loop lagged {lag:.0f} ms p99: the machine is saturated, "
                    "timings are suspect; lower concurrency)[/]"
                )
        err_console.print(clock + line, highlight=False)


def _print_summary(groups: list[Any]) -> None:
    table = Table(title="per backend (median over runs; split = share of summed task time)")
    for column in (
        "backend", "tok/s", "runs", "solved", "task s p50", "p90", "steps",
        "model", "tools", "other", "speedup (95% CI)",
    ):  # fmt: skip
        table.add_column(column, justify="right")
    for group in groups:
        ci = f" ({group.ci[0]:.2f}-{group.ci[1]:.2f})" if group.ci else ""
        table.add_row(
            group.label,
            f"{group.decode_tps:g}" if group.decode_tps else "-",
            str(group.runs),
            f"{group.solved}/{group.checked}",
            f"{group.median_task_s:.2f}",
            f"{group.p90_task_s:.2f}",
            f"{group.median_steps:g}",
            f"{group.model_share:.0%}",
            f"{group.tool_share:.0%}",
            f"{group.overhead_share:.0%}",
            f"{group.speedup:.2f}x{ci}",
        )
    console.print(table)


# -- replay and sweep -------------------------------------------------------------------------


@app.command()
def replay(
    inputs: Annotated[list[Path], typer.Argument(help="Trace files or run directories.")],
    profile: Annotated[
        str, typer.Option("--profile", "-p", help="Preset name or profile YAML to replay at.")
    ] = "fast-750",
    set_: Annotated[
        list[str] | None, typer.Option("--set", "-s", help="Profile override field=value.")
    ] = None,
    mode: Annotated[
        str, typer.Option(help="virtual (re-time, run nothing) or live (re-run the tools).")
    ] = "virtual",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Directory for the replayed traces.")
    ] = None,
) -> None:
    """Replay recorded runs at another latency profile, virtually or live."""
    from looplab.backends.presets import resolve_profile
    from looplab.experiments.replay import default_output, load_traces, replay_live, replay_virtual
    from looplab.traces.io import write_trace

    if mode not in ("virtual", "live"):
        raise ConfigError(f"unknown mode {mode!r}", field="--mode", allowed=["virtual", "live"])
    resolved = resolve_profile(profile, set_ or [])
    traces = load_traces(inputs)
    destination = output or default_output(inputs)
    table = Table(title=f"{mode} replay at {resolved.name} ({resolved.decode_tps:g} tok/s)")
    for column in ("run", "steps", "recorded s", "replayed s", "speedup", "divergences"):
        table.add_column(column, justify="right")
    for trace in traces:
        divergences: list[str] = []
        if mode == "virtual":
            new = replay_virtual(trace, resolved)
        else:
            live = asyncio.run(replay_live(trace, resolved))
            new = live.trace
            divergences = [
                f"step {d.step} {d.tool}: {d.recorded} -> {d.replayed}" for d in live.divergences
            ]
        write_trace(destination / f"{new.header.run_id}.jsonl", new.header, new.events)
        before = trace.end.end if trace.end else 0.0
        after = new.end.end if new.end else 0.0
        table.add_row(
            trace.header.run_id,
            str(len(trace.model_calls())),
            f"{before:.2f}",
            f"{after:.2f}",
            f"{before / after:.2f}x" if after else "-",
            "; ".join(divergences) or "none",
        )
    console.print(table)
    console.print(f"replayed traces: {destination}")


@app.command()
def sweep(
    inputs: Annotated[list[Path], typer.Argument(help="Trace files or run directories.")],
    rates: Annotated[
        str, typer.Option(help="Comma-separated decode rates, tok/s.")
    ] = "20,40,80,160,320,750,1000,2000,5000",
    ttft: Annotated[
        str | None, typer.Option(help="Comma-separated TTFT bases, s (default: the profile's).")
    ] = None,
    profile: Annotated[
        str, typer.Option("--profile", "-p", help="Base profile for prefill, stages, jitter.")
    ] = "slow-80",
    reference: Annotated[
        float | None,
        typer.Option(help="Decode rate speedups are relative to (default: the lowest)."),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the table as JSON here.")
    ] = None,
    profile_set: Annotated[
        list[str] | None,
        typer.Option(
            "--profile-set",
            help="Override a profile field (repeatable), e.g. decode_context_slowdown=0 "
            "(as if context did not slow decode) or background_streams=32 (as if 32 other "
            "agents shared the server).",
        ),
    ] = None,
) -> None:
    """Predicted task time and speedup of recorded runs over decode rates (and TTFTs)."""
    from looplab.backends.presets import resolve_profile
    from looplab.experiments.replay import load_traces
    from looplab.experiments.sweep import run_sweep

    base = resolve_profile(profile, profile_set or [])
    rate_list = _parse_numbers(rates, "--rates", float)
    ttft_list = _parse_numbers(ttft, "--ttft", float) if ttft else [base.ttft_s]
    traces = load_traces(inputs)
    if reference is not None and reference <= 0:
        raise ConfigError("must be a positive rate", field="--reference")
    rows, summaries = run_sweep(traces, rate_list, ttft_list, base, reference)
    table = Table(
        title=f"sweep of {len(traces)} trace(s), {len(rows)} points "
        f"(medians; speedup vs {reference or min(rate_list):g} tok/s)"
    )
    for column in (
        "tok/s", "TTFT s", "task s", "speedup", "decode", "reasoning", "TTFT+prefill", "tools",
        "other", "Amdahl ceiling",
    ):  # fmt: skip
        table.add_column(column, justify="right")
    for entry in summaries:
        table.add_row(
            f"{entry.decode_tps:g}",
            f"{entry.ttft_s:g}",
            f"{entry.task_s:.2f}",
            f"{entry.speedup:.2f}x",
            f"{entry.decode_share:.0%}",
            f"{entry.reasoning_share:.0%}",
            f"{entry.ttft_share:.0%}",
            f"{entry.tool_share:.0%}",
            f"{entry.other_share:.0%}",
            f"{entry.amdahl_ceiling:.2f}x",
        )
    console.print(table)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps([e.as_dict() for e in summaries], indent=2))
        console.print(f"table: {output}")


@app.command()
def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """Print the JSON Schema of the looplab-1 trace format (header and events)."""
    from looplab.traces.jsonschema import trace_json_schema

    text = json.dumps(trace_json_schema(), indent=2, sort_keys=True) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text)
        console.print(f"schema: {output}")


# -- bench ------------------------------------------------------------------------------


@bench_app.command("backend")
def bench_backend(
    rates: Annotated[
        str, typer.Option(help="Comma-separated target decode rates, tok/s.")
    ] = "80,750",
    concurrency: Annotated[
        str, typer.Option(help="Comma-separated concurrent stream counts.")
    ] = "1,16,64",
    tokens: Annotated[int, typer.Option(help="Output tokens per stream.")] = 500,
    output: Annotated[Path, typer.Option("--output", "-o", help="JSON results file.")] = Path(
        "bench-results/backend.json"
    ),
    serving: Annotated[
        bool,
        typer.Option(help="Also measure each serving model (context, batch, ceiling, prefill)."),
    ] = True,
) -> None:
    """Pacing fidelity through the real openai client: schedule pacer vs naive baseline."""
    from looplab.backends.bench import (
        SERVING_MODELS,
        prepare_cost,
        run_backend_bench,
        run_serving_bench,
        tokenizer_agreement,
    )

    rate_list = _parse_numbers(rates, "--rates", float)
    conc_list = _parse_numbers(concurrency, "--concurrency", int)
    cells = run_backend_bench(
        rates=rate_list,
        concurrencies=conc_list,
        tokens=tokens,
        progress=lambda line: err_console.print(f"[dim]measuring {line}[/]"),
    )
    table = Table(title=f"looplab bench backend: {tokens} tokens/stream (p50 unless marked)")
    columns = (
        "tok/s", "streams", "pacer", "rate err%", "worst%", "TTFT err ms", "p99",
        "gap ms", "p99", "CPU ms/1k",
    )  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right")
    for cell in cells:
        table.add_row(
            f"{cell.target_tps:g}",
            str(cell.concurrency),
            cell.pacer,
            f"{cell.rate_error_pct_p50:+.2f}",
            f"{cell.rate_error_pct_worst:+.2f}",
            f"{cell.ttft_error_ms_p50:.2f}",
            f"{cell.ttft_error_ms_p99:.2f}",
            f"{cell.chunk_gap_ms_p50:.1f}",
            f"{cell.chunk_gap_ms_p99:.1f}",
            f"{(cell.server_cpu_s_per_1k_tokens + cell.client_cpu_s_per_1k_tokens) * 1000:.0f}",
            style="bold" if cell.pacer == "schedule" else "dim",
        )
    console.print(table)
    parts = Table(title="where the schedule pacer's TTFT error comes from (p50, ms)")
    for column in (
        "tok/s",
        "streams",
        "request transit",
        "release late",
        "delivery",
        "server/client CPU ms/1k",
    ):
        parts.add_column(column, justify="right")
    for cell in cells:
        if cell.pacer != "schedule":
            continue
        parts.add_row(
            f"{cell.target_tps:g}",
            str(cell.concurrency),
            f"{cell.request_transit_ms_p50:.2f}",
            f"{cell.first_release_late_ms_p50:+.2f}",
            f"{cell.delivery_ms_p50:.2f}",
            f"{cell.server_cpu_s_per_1k_tokens * 1000:.0f}"
            f"/{cell.client_cpu_s_per_1k_tokens * 1000:.0f}",
        )
    console.print(parts)
    schedule = [c for c in cells if c.pacer == "schedule"]
    worst_rate = max(abs(c.rate_error_pct_p50) for c in schedule)
    top = max(conc_list)
    at_top = [c for c in schedule if c.concurrency == top]
    console.print(
        f"schedule pacer: worst |rate error| {worst_rate:.2f}% (target <= 0.5%); at {top} streams "
        f"TTFT error p50 {max(c.ttft_error_ms_p50 for c in at_top):.2f} ms (target <= 2), "
        f"p99 {max(c.ttft_error_ms_p99 for c in at_top):.2f} ms (target <= 10)"
    )
    naive = {(c.target_tps, c.concurrency): c for c in cells if c.pacer == "naive"}
    for cell in schedule:
        base = naive.get((cell.target_tps, cell.concurrency))
        if base is not None and cell.concurrency == 1:
            console.print(
                f"{cell.target_tps:g} tok/s, 1 stream: naive pacer delivers "
                f"{cell.target_tps * (1 + base.rate_error_pct_p50 / 100):.0f} tok/s, "
                f"schedule pacer {cell.target_tps * (1 + cell.rate_error_pct_p50 / 100):.1f}"
            )
    if serving:
        models = run_serving_bench(
            progress=lambda line: err_console.print(f"[dim]measuring {line}[/]")
        )
        cells += models
        served = Table(title="serving models: error against each stream's intended schedule")
        for column in (
            "model", "intended tok/s", "re-plans", "rate err%", "worst%", "TTFT err ms", "p99",
            "late p99 ms", "what",
        ):  # fmt: skip
            served.add_column(column, justify="left" if column in ("model", "what") else "right")
        for cell in models:
            served.add_row(
                cell.model,
                f"{cell.intended_tps_p50:.0f}",
                f"{cell.replans_p50:g}",
                f"{cell.rate_error_pct_p50:+.2f}",
                f"{cell.rate_error_pct_worst:+.2f}",
                f"{cell.ttft_error_ms_p50:.2f}",
                f"{cell.ttft_error_ms_p99:.2f}",
                f"{cell.lateness_ms_p99:.2f}",
                SERVING_MODELS[cell.model][0],
            )
        console.print(served)
        worst = max(abs(c.rate_error_pct_p50) for c in models)
        console.print(f"serving models: worst |rate error| p50 {worst:.2f}% (target <= 0.5%)")
    prompt, last_ms, median_ms = prepare_cost()
    console.print(
        f"simulator request preparation, 60-step conversation: {median_ms:.1f} ms median, "
        f"{last_ms:.1f} ms at the last step ({prompt:,} prompt tokens)"
    )
    for name, files, exact, approx in tokenizer_agreement(Path.cwd()):
        console.print(
            f"prompt tokenizer fallback (approx-words-4c) vs o200k on {name} ({files} files): "
            f"{approx:,} vs {exact:,} tokens ({(approx / exact - 1) * 100:+.1f}%)"
        )
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps([c.as_dict() for c in cells], indent=2))
    console.print(f"results: {output}")


@bench_app.command("replay")
def bench_replay(
    traces: Annotated[int, typer.Option(help="Synthetic traces to re-time.")] = 50,
    steps: Annotated[int, typer.Option(help="Steps per synthetic trace.")] = 200,
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
    console.print(table)


@bench_app.command("report")
def bench_report(
    runs: Annotated[int, typer.Option(help="Synthetic runs in the experiment.")] = 1000,
) -> None:
    """Time to write the HTML report of an experiment with RUNS synthetic runs (target: seconds)."""
    import tempfile

    from looplab.report.build import write_report
    from looplab.report.synthetic import write_synthetic_experiment

    with tempfile.TemporaryDirectory(prefix="looplab-bench-report-") as directory:
        experiment = write_synthetic_experiment(Path(directory) / "syn", runs)
        times: list[float] = []
        for _ in range(3):
            result = write_report([experiment], Path(directory) / "report.html")
            times.append(result.seconds)
        size_mb = (Path(directory) / "report.html").stat().st_size / 1e6
    console.print(
        f"report of {runs} runs: {statistics.median(times):.2f} s median of 3 "
        f"(min {min(times):.2f} s), {size_mb:.1f} MB"
    )


@bench_app.command("clock")
def bench_clock(
    config: Annotated[
        Path, typer.Argument(help="Experiment to run twice (wall, then virtual clock).")
    ] = Path("experiments/configs/quickstart.yaml"),
    override: Annotated[
        list[str] | None, typer.Option("--config-override", "-c", help="key.path=value")
    ] = None,
) -> None:
    """Virtual-clock task times against wall-clock ones, cell by cell (target: within 3%)."""
    from looplab.experiments.bench import run_clock_bench

    pairs = run_clock_bench(config, override or [])
    if not pairs:
        raise ConfigError("no cell finished on both clocks", field="CONFIG")
    table = Table(title=f"wall vs virtual clock: {config}")
    for column in ("cell", "wall s", "virtual s", "difference", "re-timed s", "difference"):
        table.add_column(column, justify="right")
    for pair in pairs:
        retimed = pair.retimed_difference_pct
        retimed_s = "-" if pair.retimed_s is None else f"{pair.retimed_s:.2f}"
        table.add_row(
            pair.cell, f"{pair.wall_s:.2f}", f"{pair.virtual_s:.2f}",
            f"{pair.difference_pct:+.2f}%", retimed_s,
            "-" if retimed is None else f"{retimed:+.2f}%",
        )  # fmt: skip
    console.print(table)
    median = statistics.median(abs(p.difference_pct) for p in pairs)
    worst = max(abs(p.difference_pct) for p in pairs)
    console.print(
        f"virtual clock: median |difference| {median:.2f}% (target <= 3%), worst {worst:.2f}%"
    )
    retimed_pcts = [abs(d) for p in pairs if (d := p.retimed_difference_pct) is not None]
    if retimed_pcts:
        console.print(
            f"virtual re-timing of the wall-clock runs: median |difference| "
            f"{statistics.median(retimed_pcts):.2f}% (target <= 3%), worst {max(retimed_pcts):.2f}%"
        )


def _parse_numbers(text: str, flag: str, kind: type[float] | type[int]) -> list[Any]:
    try:
        values = [kind(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(
            f"{text!r} is not a comma-separated list of numbers", field=flag
        ) from None
    if not values or min(values) <= 0:
        raise ConfigError("give at least one positive number", field=flag)
    return values


def main() -> None:
    """Console-script entry point: run the app, printing people-facing errors plainly."""
    try:
        app()  # standalone mode: usage errors, --help and exit codes are typer's own
    except (ConfigError, PrerequisiteError) as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)
    except LooplabError as exc:
        err_console.print(f"[bold red]{type(exc).__name__}:[/] {exc}", highlight=False)
        sys.exit(1)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
