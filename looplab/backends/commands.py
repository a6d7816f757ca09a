"""`looplab serve`, `looplab profiles`, `looplab demo`, `looplab bench backend`.

Commands of the backends package; `looplab.cli.app` registers them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from looplab.console import (
    DrainOpt,
    HostOpt,
    OutputOpt,
    PortOpt,
    ProfileOpt,
    ProfileSetOpt,
    err_console,
    out_console,
    parse_numbers,
    write_output,
)
from looplab.errors import ConfigError

__all__ = [
    "bench_backend_command",
    "demo_command",
    "profiles_command",
    "serve_command",
]


def serve_command(
    profile: ProfileOpt = "fast-750",
    profile_set: ProfileSetOpt = None,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8750,
    pacer: Annotated[
        str, typer.Option(help="Token pacer: 'schedule' (exact) or 'naive' (per-token sleep).")
    ] = "schedule",
    port_file: Annotated[
        Path | None,
        typer.Option(help="Write the bound port to this file once serving.", show_default=False),
    ] = None,
    drain_s: DrainOpt = 5.0,
) -> None:
    """Serve the OpenAI-compatible simulator: POST /v1/chat/completions, POST /v1/responses
    (and the Responses WebSocket at /v1/responses), GET /v1/models.

    Models: `looplab-lorem` (text of the profile's length, or tool calls when tools are
    given). Timing of any request: GET /v1/looplab/requests/{x-looplab-request-id}/timing.
    """
    import uvicorn

    from looplab.backends.profiles.presets import resolve_profile
    from looplab.backends.profiles.timing import TimingModel
    from looplab.backends.simulator.guard import listening_socket
    from looplab.backends.simulator.inprocess import uvicorn_config
    from looplab.backends.simulator.model import Simulator
    from looplab.backends.simulator.pacing import PACERS
    from looplab.backends.simulator.timers import run_server

    if pacer not in PACERS:
        raise ConfigError(f"unknown pacer {pacer!r}", field="--pacer", allowed=list(PACERS))
    resolved = resolve_profile(profile, profile_set or [])
    simulator = Simulator(resolved, pacer=pacer)
    sock = listening_socket(host)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot bind {host}:{port}: {exc.strerror}", field="--port") from None
    bound = sock.getsockname()[1]
    ttft_ms = TimingModel.from_profile(resolved).fixed_ttft_s * 1000
    err_console().print(
        f"[bold]looplab simulator[/] profile [cyan]{resolved.name}[/] "
        f"({resolved.decode_tps:g} tok/s, TTFT {ttft_ms:.0f} ms, "
        f"pacer {pacer}, tokenizer {simulator.tokenizer.name}) on http://{host}:{bound}/v1"
    )
    sock.listen(2048)  # connections wait in the backlog until the server runs
    if port_file is not None:
        port_file.write_text(str(bound))
    server = uvicorn.Server(uvicorn_config(simulator, host=host, port=bound, drain_s=drain_s))
    try:
        run_server(server, [sock])
    finally:
        sock.close()


def profiles_command(
    name: Annotated[str | None, typer.Argument(help="Show one preset in full.")] = None,
) -> None:
    """List the latency presets (or show one), with their sources and assumptions."""
    from looplab.backends.profiles.presets import presets, resolve_profile
    from looplab.backends.profiles.timing import TimingModel

    console = out_console()
    if name is not None:
        console.print_json(json.dumps(resolve_profile(name).model_dump(mode="json", by_alias=True)))
        return
    table = Table(title="latency presets", show_lines=False)
    for column in ("name", "decode tok/s", "TTFT ms", "overhead ms http/ws", "prefill tok/s"):
        table.add_column(column, overflow="fold")
    table.add_column("source", overflow="fold")
    for preset in presets().values():
        timing = TimingModel.from_profile(preset)
        table.add_row(
            preset.name,
            f"{preset.decode_tps:g}",
            f"{timing.fixed_ttft_s * 1000:.0f}",
            f"{timing.overhead_s('http') * 1000:.0f}/{timing.overhead_s('websocket') * 1000:.0f}",
            "free" if preset.prefill_tps is None else f"{preset.prefill_tps:,.0f}",
            preset.source,
        )
    console.print(table)


def demo_command(
    tokens: Annotated[int, typer.Option(min=1, help="Output tokens per reply.")] = 400,
    steps: Annotated[
        int, typer.Option(min=1, help="Model calls per speed (a tiny agent loop).")
    ] = 3,
) -> None:
    """Stream the same conversation at slow-80 and fast-750 and print measured timings."""
    from looplab.backends.bench.demo import run_demo

    results = {preset: asyncio.run(run_demo(preset, tokens, steps)) for preset in DEMO_PRESETS}
    table = Table(title=f"same {steps}-call conversation, {tokens} output tokens per call")
    for column in ("profile", "call", "TTFT ms", "decode tok/s", "model s", "cached/prompt"):
        table.add_column(column, justify="right")
    for preset, responses in results.items():
        for index, r in enumerate(responses):
            table.add_row(
                preset,
                str(index + 1),
                f"{(r.timing.ttft_s or 0) * 1000:.1f}",
                f"{r.decode_rate_tps or 0:.1f}",
                f"{r.timing.model_s or 0:.2f}",
                f"{r.cached_tokens}/{r.prompt_tokens}",
            )
    console = out_console()
    console.print(table)
    totals = {p: sum(r.timing.model_s or 0 for r in rs) for p, rs in results.items()}
    console.print(
        f"model time: slow-80 {totals['slow-80']:.2f} s, fast-750 {totals['fast-750']:.2f} s "
        f"-> {totals['slow-80'] / totals['fast-750']:.1f}x faster for a {750 / 80:.1f}x faster "
        "decode (TTFT and prefill do not shrink; tools, in a real task, do not either)."
    )


DEMO_PRESETS = ("slow-80", "fast-750")


def _bench_tables(cells: list[Any], tokens: int) -> list[Table]:
    table = Table(title=f"looplab bench backend: {tokens} tokens/stream (p50 unless marked)")
    columns = [
        "tok/s",
        "streams",
        "pacer",
        "client",
        "rate err%",
        "worst%",
        "TTFT err ms",
        "p99",
        "server late ms",
        "p99",
        "gap ms",
        "p99",
        "CPU ms/1k",
    ]
    for column in columns:
        table.add_column(column, justify="right")
    for cell in cells:
        table.add_row(
            f"{cell.target_tps:g}",
            str(cell.concurrency),
            cell.pacer,
            cell.client_label,
            f"{cell.rate_error_pct_p50:+.2f}",
            f"{cell.rate_error_pct_worst:+.2f}",
            f"{cell.ttft_error_ms_p50:.2f}",
            f"{cell.ttft_error_ms_p99:.2f}",
            f"{cell.lateness_ms_p50:.2f}",
            f"{cell.lateness_ms_p99:.2f}",
            f"{cell.chunk_gap_ms_p50:.1f}",
            f"{cell.chunk_gap_ms_p99:.1f}",
            f"{(cell.server_cpu_s_per_1k_tokens + cell.client_cpu_s_per_1k_tokens) * 1000:.0f}",
            style="bold" if cell.pacer == "schedule" else "dim",
        )
    parts = Table(title="where the schedule pacer's TTFT error comes from (p50, ms)")
    for column in ("tok/s", "streams", "client", "request transit", "release late", "delivery"):
        parts.add_column(column, justify="right")
    parts.add_column("CPU server/client", justify="right")
    for cell in cells:
        if cell.pacer == "schedule":
            parts.add_row(
                f"{cell.target_tps:g}",
                str(cell.concurrency),
                cell.client_label,
                f"{cell.request_transit_ms_p50:.2f}",
                f"{cell.first_release_late_ms_p50:+.2f}",
                f"{cell.delivery_ms_p50:.2f}",
                f"{cell.server_cpu_s_per_1k_tokens * 1000:.0f}"
                f"/{cell.client_cpu_s_per_1k_tokens * 1000:.0f}",
            )
    return [table, parts]


FIDELITY_STREAMS = (1, 16)
"""Concurrencies at which the pacing targets must hold through every client."""
RATE_TARGET_PCT = 0.5
TTFT_TARGET_MS = 2.0


def fidelity_failures(cells: list[Any]) -> list[str]:
    """The schedule cells at 1 and 16 streams that miss a target, as sentences:
    |rate error| p50 <= 0.5% through every client; TTFT error p50 <= 2 ms through the
    raw client (`FLOOR_CLIENT`: the server's part; the other clients add their own
    request building and chunk parsing, printed as their excess over it)."""
    from looplab.backends.bench.loadgen import FLOOR_CLIENT

    failures = []
    for cell in cells:
        if cell.pacer != "schedule" or cell.concurrency not in FIDELITY_STREAMS:
            continue
        where = f"{cell.target_tps:g} tok/s, {cell.concurrency} streams, {cell.client_label}"
        if not abs(cell.rate_error_pct_p50) <= RATE_TARGET_PCT:  # NaN: no rate measured
            failures.append(f"{where}: rate error {cell.rate_error_pct_p50:+.2f}%")
        if cell.client == FLOOR_CLIENT and cell.ttft_error_ms_p50 > TTFT_TARGET_MS:
            failures.append(f"{where}: TTFT error {cell.ttft_error_ms_p50:.2f} ms")
    return failures


def client_overheads(cells: list[Any]) -> list[str]:
    """Per schedule cell through a client other than the raw one: its TTFT error p50
    minus the raw client's in the same (rate, streams), the client's own share."""
    from looplab.backends.bench.loadgen import FLOOR_CLIENT

    floor = {
        (c.target_tps, c.concurrency): c.ttft_error_ms_p50
        for c in cells
        if c.pacer == "schedule" and c.client == FLOOR_CLIENT
    }
    lines = []
    for cell in cells:
        base = floor.get((cell.target_tps, cell.concurrency))
        if cell.pacer == "schedule" and cell.client != FLOOR_CLIENT and base is not None:
            lines.append(
                f"{cell.target_tps:g} tok/s, {cell.concurrency} streams, {cell.client_label} "
                f"client: TTFT error {cell.ttft_error_ms_p50:.2f} ms, raw client's "
                f"{base:.2f}: {cell.ttft_error_ms_p50 - base:+.2f} ms of the client's own"
            )
    return lines


def _bench_verdicts(cells: list[Any], concurrencies: list[int]) -> list[str]:
    schedule = [c for c in cells if c.pacer == "schedule"]
    top = max(concurrencies)
    at_top = [c for c in schedule if c.concurrency == top]
    failures = fidelity_failures(cells)
    lines = [
        ("FAIL: " + "; ".join(failures))
        if failures
        else "PASS: at 1 and 16 streams, |rate error| p50 <= 0.5% through every client and "
        "TTFT error p50 <= 2 ms through the raw client (the server's part)",
        "TTFT error through the openai-based clients includes their own per-request work "
        "(building the request before it is sent, parsing chunks into objects), which no "
        "server removes; the raw client does none of it:",
        *client_overheads(cells),
    ]
    for cell in at_top:
        lines.append(
            f"{cell.target_tps:g} tok/s, {top} streams, {cell.client_label} client: rate error "
            f"{cell.rate_error_pct_p50:+.2f}%, TTFT error p50 {cell.ttft_error_ms_p50:.2f} ms "
            f"(server's own release lateness p50 {cell.lateness_ms_p50:.2f} ms)"
        )
    naive = {(c.target_tps, c.concurrency): c for c in cells if c.pacer == "naive"}
    for cell in schedule:
        base = naive.get((cell.target_tps, cell.concurrency))
        if base is not None and cell.concurrency == 1 and cell.client == "looplab":
            lines.append(
                f"{cell.target_tps:g} tok/s, 1 stream: naive pacer delivers "
                f"{cell.target_tps * (1 + base.rate_error_pct_p50 / 100):.0f} tok/s, "
                f"schedule pacer {cell.target_tps * (1 + cell.rate_error_pct_p50 / 100):.1f}"
            )
    return lines


def _serving_table(models: list[Any]) -> Table:
    from looplab.backends.bench.backend import SERVING_MODELS

    served = Table(title="serving models: error against each stream's intended schedule")
    for column in (
        "model",
        "intended tok/s",
        "re-plans",
        "rate err%",
        "worst%",
        "TTFT err ms",
        "p99",
        "late p99 ms",
        "what",
    ):
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
    return served


def bench_backend_command(
    rates: Annotated[
        str, typer.Option(help="Comma-separated target decode rates, tok/s.")
    ] = "80,750",
    concurrency: Annotated[
        str, typer.Option(help="Comma-separated concurrent stream counts.")
    ] = "1,16,64",
    tokens: Annotated[int, typer.Option(min=2, help="Output tokens per stream.")] = 500,
    output: OutputOpt = Path("bench-results/backend.json"),
    serving: Annotated[
        bool,
        typer.Option(help="Also measure each serving model (context, batch, ceiling, prefill)."),
    ] = True,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Exit 1 when a pacing target is missed at 1 or 16 streams: |rate error| "
            "p50 > 0.5% through any client, or TTFT error p50 > 2 ms through the raw client "
            "(the server's part; openai-based clients add their own request work).",
        ),
    ] = False,
) -> None:
    """Pacing fidelity through three clients (raw HTTP, looplab's instrumented one and the
    stock openai client): schedule pacer vs naive baseline."""
    from looplab.backends.bench.backend import (
        prepare_cost,
        run_backend_bench,
        run_serving_bench,
        tokenizer_agreement,
    )

    rate_list = parse_numbers(rates, "--rates", float)
    conc_list = parse_numbers(concurrency, "--concurrency", int)
    errors = err_console()
    cells = run_backend_bench(
        rates=rate_list,
        concurrencies=conc_list,
        tokens=tokens,
        progress=lambda line: errors.print(f"[dim]measuring {line}[/]"),
    )
    console = out_console()
    for table in _bench_tables(cells, tokens):
        console.print(table)
    for line in _bench_verdicts(cells, conc_list):
        console.print(line)
    if serving:
        models = run_serving_bench(progress=lambda line: errors.print(f"[dim]measuring {line}[/]"))
        cells += models
        console.print(_serving_table(models))
        worst = max(abs(c.rate_error_pct_p50) for c in models)
        console.print(f"serving models: worst |rate error| p50 {worst:.2f}% (target <= 0.5%)")
    prompt, last_ms, median_ms = prepare_cost()
    console.print(
        f"simulator request preparation, 60-step conversation: {median_ms:.1f} ms median, "
        f"{last_ms:.1f} ms at the last step ({prompt:,} prompt tokens)"
    )
    for name, files, exact, approx in tokenizer_agreement(Path.cwd()):
        if not exact:
            continue  # not run from a checkout: no such files here
        console.print(
            f"prompt tokenizer fallback (approx-words-4c) vs o200k on {name} ({files} files): "
            f"{approx:,} vs {exact:,} tokens ({(approx / exact - 1) * 100:+.1f}%)"
        )
    if output is not None and write_output(output, json.dumps([c.as_dict() for c in cells])):
        console.print(f"results: {output}")
    if check and fidelity_failures(cells):
        raise typer.Exit(1)
