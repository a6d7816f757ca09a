"""`looplab sandbox build|prune|bench`: a typer app the main CLI mounts.

`bench_sandbox_command` is also usable on its own, e.g. as `looplab bench sandbox`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

__all__ = ["app", "bench_sandbox_command", "build_command", "prune_command"]

app = typer.Typer(help="Sandbox images, leftovers and benchmarks.", no_args_is_help=True)


@app.command("build")
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
    Console().print(
        f"{result.tag} {result.image_id[:19]} ({result.method}, {result.duration_s:.1f} s)"
    )


@app.command("prune")
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

    console = Console()
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


@app.command("bench")
def bench_sandbox_command(
    kinds: Annotated[
        str, typer.Option(help="comma-separated kinds: local, docker, docker-api (baseline)")
    ] = "local,docker,docker-api",
    reps: Annotated[int, typer.Option(min=1, help="repetitions per operation")] = 50,
    out: Annotated[
        Path | None, typer.Option(help="JSON output file (default bench-results/sandbox-*.json)")
    ] = None,
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
    console = Console()
    console.print(table)
    for kind, description in report.descriptions.items():
        console.print(f"[dim]{kind}: {description}[/dim]")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = out or Path("bench-results") / f"sandbox-{stamp}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.to_json(), indent=2))
    console.print(f"wrote {path}")
