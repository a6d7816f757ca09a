"""`looplab sandbox build|prune` and `looplab bench sandbox`.

Commands of the sandboxes package; `looplab.cli.app` registers them.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from looplab.console import OutputOpt, out_console, write_output

__all__ = ["bench_sandbox_command", "build_command", "prune_command"]


def build_command(
    method: Annotated[str, typer.Option(help="auto | dockerfile | debootstrap (offline)")] = "auto",
    force: Annotated[bool, typer.Option(help="rebuild even if the inputs are unchanged")] = False,
    mirror: Annotated[str | None, typer.Option(help="Debian mirror for debootstrap")] = None,
) -> None:
    """Build the sandbox image looplab/sandbox:<version> (cached by an inputs hash)."""
    from looplab.errors import ConfigError
    from looplab.sandboxes.image import build_image

    if method not in ("auto", "dockerfile", "debootstrap"):
        raise ConfigError(
            f"unknown build method {method!r}",
            field="--method",
            allowed=["auto", "dockerfile", "debootstrap"],
        )
    result = build_image(method=method, force=force, mirror=mirror)  # type: ignore[arg-type]  # checked above
    out_console().print(
        f"{result.tag} {result.image_id[:19]} ({result.method}, {result.duration_s:.1f} s)"
    )


def prune_command(
    everything: Annotated[
        bool, typer.Option("--all", help="remove every looplab container, owners alive or not")
    ] = False,
) -> None:
    """Remove what runs whose process is gone left behind: sandbox containers, local sandbox
    processes, cgroups and temporary directories (`.looplab-owner` marked)."""
    from looplab.errors import PrerequisiteError
    from looplab.sandboxes.leftovers import prune_host
    from looplab.sandboxes.prune import prune

    console = out_console()
    host = prune_host()
    console.print(
        f"removed {len(host.processes)} process(es), {len(host.cgroups)} cgroup(s), "
        f"{len(host.dirs)} temporary director{'y' if len(host.dirs) == 1 else 'ies'}"
    )
    if host.failed:
        console.print(f"[yellow]could not remove: {', '.join(host.failed)}[/]")
    try:
        result = prune(everything=everything)
    except PrerequisiteError as exc:
        console.print(f"containers not checked: {str(exc).splitlines()[0]}")
        return
    console.print(f"removed {len(result.removed)} container(s), kept {len(result.kept)}")


def bench_sandbox_command(
    kinds: Annotated[
        str, typer.Option(help="comma-separated kinds: local, docker, docker-api (baseline)")
    ] = "local,docker,docker-api",
    reps: Annotated[int, typer.Option(min=1, help="repetitions per operation")] = 50,
    output: OutputOpt = None,
) -> None:
    """Time create (cold, warm pool), exec, 1 MiB file I/O and close per sandbox kind."""
    from looplab.sandboxes.bench import OPERATIONS, run_bench_sync

    chosen = [kind.strip() for kind in kinds.split(",") if kind.strip()]
    report = run_bench_sync(chosen, reps)
    table = Table(title=f"sandbox latency, ms (p50 / p95 over {reps} reps)")
    table.add_column("operation")
    for kind in chosen:
        table.add_column(kind, justify="right")
    if {"docker", "local"} <= set(chosen):
        table.add_column("docker/local p50", justify="right")
    for op in OPERATIONS:
        row = [op]
        for kind in chosen:
            stats = report.kinds[kind][op]
            row.append(f"{stats.p50_ms:.2f} / {stats.p95_ms:.2f}")
        if {"docker", "local"} <= set(chosen):
            ratio = report.ratio("docker", "local", op)
            row.append("-" if ratio is None else f"{ratio:.1f}x")
        table.add_row(*row)
    console = out_console()
    console.print(table)
    for kind, description in report.descriptions.items():
        console.print(f"[dim]{kind}: {description}[/dim]")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = output or Path("bench-results") / f"sandbox-{stamp}.json"
    if write_output(path, json.dumps(report.to_json(), indent=2)):
        console.print(f"wrote {path}")


def bench_browser_command(
    reps: Annotated[int, typer.Option(min=1, help="repetitions per capture")] = 30,
) -> None:
    """What a trace screenshot and each observation kind (aria, screenshot, marks, dom)
    cost per browser action, beside the action's own snapshot."""
    from looplab.extras import require
    from looplab.sandboxes.browser_bench import run_browser_bench

    require("agents", "looplab bench browser")
    rows = run_browser_bench(reps)
    table = Table(title=f"browser captures on a 1280x800 page ({reps} reps)")
    for column in ("capture", "p50 ms", "p95 ms", "size p50"):
        table.add_column(column, justify="right")
    for row in rows:
        size = (
            f"{row.bytes_p50 / 1000:.1f} KB"
            if "screenshot" in row.name or "marks" in row.name
            else f"{row.bytes_p50:,} chars"
        )
        table.add_row(row.name, f"{row.p50_ms:.1f}", f"{row.p95_ms:.1f}", size)
    out_console().print(table)
