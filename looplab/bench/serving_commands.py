"""`looplab bench transport` (per-round-trip overhead by transport, a tool-calling task over
HTTP vs the Responses WebSocket) and `looplab bench proxy` (the proxy's added TTFT and rate
error beside `serve`, through every client)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from looplab.console import (
    OutputOpt,
    ProfileOpt,
    ProfileSetOpt,
    err_console,
    out_console,
    parse_numbers,
    write_output,
)

__all__ = ["bench_starts_command", "bench_transport_command"]

OPENAI_CUT = 0.40
"""OpenAI (2026-04-22): runs with 20+ tool calls about 40% faster over the WebSocket."""


def bench_transport_command(
    rounds: Annotated[int, typer.Option(min=5, help="Measured calls per transport.")] = 200,
    rtt_ms: Annotated[
        float,
        typer.Option(
            min=0,
            help="Network RTT, ms: projected onto the round trips, and the task's network_rtt_s.",
        ),
    ] = 50.0,
    loop_calls: Annotated[
        int, typer.Option(min=0, help="Tool calls in the task (0: skip the task).")
    ] = 24,
    tool_ms: Annotated[float, typer.Option(min=0, help="Time each tool takes, ms.")] = 100.0,
    overhead_ms: Annotated[
        str,
        typer.Option(
            help="Comma-separated per-call HTTP overheads to run the task at, ms "
            "(request_overhead_s; the WebSocket pays 20% of it)."
        ),
    ] = "0,200",
    profile: ProfileOpt = "codex-spark-1000",
    profile_set: ProfileSetOpt = None,
    output: OutputOpt = Path("bench-results/transport.json"),
) -> None:
    """Per-round-trip overhead on loopback through the real openai client (HTTP new
    connection vs keep-alive vs the Responses WebSocket), then a task of --loop-calls tool
    calls over HTTP vs WebSocket at --rtt-ms, printed next to OpenAI's 40%."""
    from looplab.bench.loop import overhead_for_cut, run_loop_bench
    from looplab.bench.transport import run_transport_bench

    overheads = parse_numbers(overhead_ms, "--overhead-ms", float, allow_zero=True)
    console = out_console()
    cells = run_transport_bench(rounds=rounds)
    console.print(_round_trip_table(cells, rounds, rtt_ms))
    by_name = {c.transport: c for c in cells}
    ratio = by_name["websocket"].median_ms / by_name["http-keepalive"].median_ms
    console.print(
        f"WebSocket / HTTP keep-alive per round trip on loopback: {ratio:.2f} "
        f"({(1 - ratio) * 100:.0f}% less; OpenAI reported about 80% less per-round-trip "
        f"overhead, 2026-04-22). The RTT column adds {rtt_ms:g} ms per wire trip "
        "(a projection, not measured)."
    )
    result: dict[str, Any] = {"round_trips": [c.as_dict() for c in cells], "tasks": []}
    if loop_calls:
        table = Table(
            title=f"task of {loop_calls} tool calls ({tool_ms:g} ms each), {profile}, "
            f"RTT {rtt_ms:g} ms"
        )
        for column in ("HTTP overhead ms", "HTTP task s", "WS task s", "cut", "OpenAI"):
            table.add_column(column, justify="right")
        for overhead in overheads:
            overrides = [
                *(profile_set or []),
                f"network_rtt_s={rtt_ms / 1000}",
                f"request_overhead_s={overhead / 1000}",
            ]
            http, ws = run_loop_bench(
                calls=loop_calls, tool_s=tool_ms / 1000, profile=profile, overrides=overrides
            )
            cut = 1 - ws.task_s / http.task_s
            table.add_row(
                f"{overhead:g}", f"{http.task_s:.2f}", f"{ws.task_s:.2f}", f"{cut:.1%}", "40%"
            )
            result["tasks"].append({"http": http.as_dict(), "websocket": ws.as_dict()})
        console.print(table)
        needed = overhead_for_cut(http, OPENAI_CUT)
        console.print(
            f"OpenAI's {OPENAI_CUT:.0%} with an 80% overhead cut needs a per-call HTTP overhead "
            f"of about {needed * 1000:.0f} ms here (the rest of a step: "
            f"{(http.task_s - http.calls * http.overhead_s) / http.calls * 1000:.0f} ms); "
            "the overheads above are assumptions, not published figures."
        )
    if output is not None and write_output(output, json.dumps(result)):
        console.print(f"results: {output}")


def _round_trip_table(cells: list[Any], rounds: int, rtt_ms: float) -> Table:
    from looplab.bench.transport import TRANSPORT_WIRE_TRIPS

    table = Table(title=f"Responses round trip on loopback, instant model ({rounds} calls each)")
    for column in ("transport", "median ms", "p90 ms", "x keep-alive", "wire trips"):
        table.add_column(column, justify="left" if column == "transport" else "right")
    table.add_column(f"at RTT {rtt_ms:g} ms", justify="right")
    for cell in cells:
        table.add_row(
            cell.transport,
            f"{cell.median_ms:.2f}",
            f"{cell.p90_ms:.2f}",
            f"{cell.ratio_to_keepalive:.2f}",
            str(TRANSPORT_WIRE_TRIPS[cell.transport]),
            f"{cell.projected_ms(rtt_ms / 1000):.1f}",
        )
    return table


def bench_proxy_command(
    rates: Annotated[
        str, typer.Option(help="Comma-separated profile decode rates, tok/s.")
    ] = "80,750",
    upstream_ttft: Annotated[
        str,
        typer.Option(help="Comma-separated upstream TTFTs, s (the profile's TTFT is 0.3 s)."),
    ] = "0,0.3",
    concurrency: Annotated[
        str, typer.Option(help="Comma-separated concurrent stream counts.")
    ] = "1,16,64",
    tokens: Annotated[int, typer.Option(min=2, help="Output tokens per stream.")] = 400,
    output: OutputOpt = Path("bench-results/proxy.json"),
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Exit 1 when the proxy misses a target at 1 or 16 streams: |rate error| "
            "p50 > 0.5% through any client, TTFT error p50 > 2 ms through the raw client "
            "(the server's part), or added TTFT (proxy minus direct) p50 > 2 ms through an "
            "openai-based client (whose own request work is in both paths).",
        ),
    ] = False,
) -> None:
    """TTFT and decode-rate error of the proxy vs the simulator direct, side by side,
    through raw HTTP, the instrumented and the stock openai client."""
    from looplab.bench.proxy import (
        print_proxy_bench,
        proxy_fidelity_failures,
        run_proxy_bench,
    )

    errors = err_console()
    rows = run_proxy_bench(
        rates=parse_numbers(rates, "--rates", float),
        upstream_ttfts=parse_numbers(upstream_ttft, "--upstream-ttft", float, allow_zero=True),
        concurrencies=parse_numbers(concurrency, "--concurrency", int),
        tokens=tokens,
        progress=lambda line: errors.print(f"[dim]measuring {line}[/]"),
    )
    console = out_console()
    print_proxy_bench(console, rows, tokens)
    if output is not None and write_output(output, json.dumps([r.as_dict() for r in rows])):
        console.print(f"results: {output}")
    if check and proxy_fidelity_failures(rows):
        raise typer.Exit(1)


def bench_starts_command(
    reps: Annotated[int, typer.Option(min=1, help="Starts per command.")] = 5,
) -> None:
    """What starting `serve` and `proxy` costs: wall to the first answer, and CPU spent."""
    from looplab.bench.starts import measure_starts, measure_tokenizer_loads

    rows = measure_starts(reps)
    table = Table(title=f"looplab bench starts: medians over {reps} starts per command")
    for column in ("command", "wall to /health p50", "CPU p50", "CPU max"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(
            row.command,
            f"{row.wall_s_p50:.2f} s",
            f"{row.cpu_s_p50:.2f} s",
            f"{row.cpu_s_max:.2f} s",
        )
    out_console().print(table)
    sample = Path(__file__).resolve().parents[1] / "README.md"
    loads = measure_tokenizer_loads(reps, str(sample))
    table = Table(title=f"tokenizer load in a fresh process: medians over {reps} loads")
    for column in ("loader", "tokenizer", "load CPU p50", f"tokens of {sample.name}"):
        table.add_column(column, justify="right")
    for load in loads:
        table.add_row(
            load.loader, load.name or "(not here)", f"{load.cpu_s_p50:.2f} s", f"{load.tokens:,}"
        )
    out_console().print(table)
