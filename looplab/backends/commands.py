"""`looplab serve`, `looplab profiles`, `looplab demo`, `looplab bench backend`.

Commands of the backends package; `looplab.cli.app` registers them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from looplab.console import (
    DrainOpt,
    HostOpt,
    PortOpt,
    ProfileOpt,
    ProfileSetOpt,
    err_console,
    out_console,
)
from looplab.errors import ConfigError

if TYPE_CHECKING:
    from looplab.latency.profile import LatencyProfile

__all__ = [
    "demo_command",
    "profiles_command",
    "serve_command",
]


def serve_command(
    ctx: typer.Context,
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
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="Simulator processes behind the one port (Linux SO_REUSEPORT): one process "
            "paces only so many streams. /health answers the totals over all of them.",
        ),
    ] = 1,
) -> None:
    """Serve the OpenAI-compatible simulator: POST /v1/chat/completions, POST /v1/responses
    (and the Responses WebSocket at /v1/responses), GET /v1/models.

    Models: `looplab-lorem` (text of the profile's length, or tool calls when tools are
    given). Timing of any request: GET /v1/looplab/requests/{x-looplab-request-id}/timing.
    With --workers N, N processes share the port; a worker that dies is reported and the
    command then exits 1 when stopped.
    """
    from looplab.backends.simulator.model import Simulator
    from looplab.backends.simulator.pacing import PACERS
    from looplab.backends.simulator.server import create_app
    from looplab.latency.presets import resolve_profile
    from looplab.latency.timing import TimingModel
    from looplab.serving.appserver import AppServer

    if pacer not in PACERS:
        raise ConfigError(f"unknown pacer {pacer!r}", field="--pacer", allowed=list(PACERS))
    resolved = resolve_profile(profile, profile_set or [])
    if workers > 1:
        log_setup = (ctx.obj or {}).get("log_setup")  # the root callback's (`looplab.cli`)
        _serve_workers(resolved, pacer, host, port, port_file, drain_s, workers, log_setup)
        return
    simulator = Simulator(resolved, pacer=pacer)
    server = AppServer(
        create_app(simulator), host=host, port=port, name="looplab-serve", drain_s=drain_s
    ).bind()  # from here connections wait in the backlog until the server runs
    ttft_ms = TimingModel.from_profile(resolved).fixed_ttft_s * 1000
    err_console().print(
        f"[bold]looplab simulator[/] profile [cyan]{resolved.name}[/] "
        f"({resolved.decode_tps:g} tok/s, TTFT {ttft_ms:.0f} ms, "
        f"pacer {pacer}, tokenizer {simulator.tokenizer.name}) on {server.base_url}"
    )
    if port_file is not None:
        port_file.write_text(str(server.port))
    server.serve_forever()


def _serve_workers(
    profile: LatencyProfile,
    pacer: str,
    host: str,
    port: int,
    port_file: Path | None,
    drain_s: float,
    workers: int,
    log_setup: Callable[[], None] | None,
) -> None:
    """`serve --workers N` (N > 1): `looplab.backends.simulator.workers`; exits 1 when a
    worker died. `log_setup` (picklable) sets each worker's logging up as the command's."""
    import os

    from looplab.backends.simulator.workers import WorkerSpec, serve_workers
    from looplab.latency.timing import TimingModel

    errors = err_console()

    def announce(bound: int) -> None:
        ttft_ms = TimingModel.from_profile(profile).fixed_ttft_s * 1000
        errors.print(
            f"[bold]looplab simulator[/] profile [cyan]{profile.name}[/] "
            f"({profile.decode_tps:g} tok/s, TTFT {ttft_ms:.0f} ms, pacer {pacer}) "
            f"on http://{host}:{bound}/v1, {workers} workers"
        )

    spec = WorkerSpec(profile, pacer, host, port, drain_s, workers, os.getpid(), log_setup)
    code = serve_workers(
        spec, port_file=port_file, announce=announce, report=lambda line: errors.print(line)
    )
    if code:
        raise typer.Exit(code)


def profiles_command(
    name: Annotated[str | None, typer.Argument(help="Show one preset in full.")] = None,
) -> None:
    """List the latency presets (or show one), with their sources and assumptions."""
    from looplab.latency.presets import presets, resolve_profile
    from looplab.latency.timing import TimingModel

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
    from looplab.backends.demo import run_demo

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
