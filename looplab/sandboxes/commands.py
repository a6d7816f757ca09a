"""`looplab sandbox build|prune` and `looplab bench sandbox`.

Commands of the sandboxes package; `looplab.cli.app` registers them.
"""

from __future__ import annotations

from typing import Annotated

import typer

from looplab.console import out_console

__all__ = ["build_command", "prune_command"]


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
