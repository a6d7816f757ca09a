"""`looplab bench backend`: pacing fidelity of the simulator through every client, its tables and
verdicts, the serving models, and the costs printed beside them (what it measures:
`looplab.bench.backend`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from looplab.bench.verdict import FIDELITY_STREAMS, fidelity_verdict
from looplab.console import (
    OutputOpt,
    err_console,
    out_console,
    parse_numbers,
    write_output,
)
from looplab.errors import ConfigError


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


RATE_TARGET_PCT = 0.5


TTFT_TARGET_MS = 2.0


def fidelity_failures(cells: list[Any]) -> list[str]:
    """The schedule cells at 1 and 16 streams that miss a target, as sentences:
    |rate error| p50 <= 0.5% through every client; TTFT error p50 <= 2 ms through the
    raw client (`FLOOR_CLIENT`: the server's part; the other clients add their own
    request building and chunk parsing, printed as their excess over it)."""
    from looplab.bench.loadgen import FLOOR_CLIENT

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
    from looplab.bench.loadgen import FLOOR_CLIENT

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
    lines = [
        fidelity_verdict(
            [c.concurrency for c in schedule],
            fidelity_failures(cells),
            "|rate error| p50 <= 0.5% through every client and TTFT error p50 <= 2 ms "
            "through the raw client (the server's part)",
        ),
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
    from looplab.bench.backend import SERVING_MODELS

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


def _print_costs(console: Any) -> None:
    """The simulator's request preparation cost and the tokenizer fallback's agreement."""
    from looplab.bench.backend import prepare_cost, tokenizer_agreement

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


def _names(text: str, flag: str, allowed: tuple[str, ...]) -> list[str]:
    """A comma-separated list of `allowed` names.

    Raises:
        ConfigError: an unknown or no name (`flag` and the allowed ones named).
    """
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in allowed]
    if unknown or not names:
        raise ConfigError(
            f"unknown name {unknown[0]!r}" if unknown else "no name given",
            field=flag,
            allowed=list(allowed),
        )
    return names


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
            "(the server's part; openai-based clients add their own request work), or when "
            "the run measured neither (nothing judged).",
        ),
    ] = False,
    workers: Annotated[
        int,
        typer.Option(min=1, max=64, help="Server processes (`looplab serve --workers`)."),
    ] = 1,
    clients: Annotated[
        str, typer.Option(help="Comma-separated clients to measure with: raw, looplab, stock.")
    ] = "raw,looplab,stock",
    pacers: Annotated[
        str, typer.Option(help="Comma-separated pacers: schedule, naive.")
    ] = "schedule,naive",
    rounds: Annotated[
        int,
        typer.Option(min=0, help="Requests per stream, back to back (0: enough for 8 streams)."),
    ] = 0,
) -> None:
    """Pacing fidelity through three clients (raw HTTP, looplab's instrumented one and the
    stock openai client): schedule pacer vs naive baseline."""
    from looplab.backends.simulator.pacing import PACERS
    from looplab.bench.backend import run_backend_bench, run_serving_bench
    from looplab.bench.loadgen import CLIENTS

    rate_list = parse_numbers(rates, "--rates", float)
    conc_list = parse_numbers(concurrency, "--concurrency", int)
    errors = err_console()
    cells = run_backend_bench(
        rates=rate_list,
        concurrencies=conc_list,
        tokens=tokens,
        progress=lambda line: errors.print(f"[dim]measuring {line}[/]"),
        workers=workers,
        clients=_names(clients, "--clients", CLIENTS),
        pacers=_names(pacers, "--pacers", tuple(PACERS)),
        rounds=rounds or None,
    )
    if workers > 1:
        errors.print(f"server: looplab serve --workers {workers}")
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
    _print_costs(console)
    if output is not None and write_output(output, json.dumps([c.as_dict() for c in cells])):
        console.print(f"results: {output}")
    judged = {c.concurrency for c in cells if getattr(c, "pacer", "") == "schedule"}
    if check and (fidelity_failures(cells) or not judged & set(FIDELITY_STREAMS)):
        raise typer.Exit(1)
