"""`looplab agents try`: commands of the agents package; `looplab.cli.app` registers them."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.table import Table

from looplab.console import ProfileSetOpt, out_console
from looplab.errors import ConfigError
from looplab.sandbox_contract import SandboxConfig

__all__ = ["try_command"]

DEFAULT_TASKS = ["coding/fix-discount", "web/shop-checkout"]
SANDBOX_KINDS = ("local", "docker")


def try_command(
    task: Annotated[
        list[str] | None, typer.Option("--task", "-t", help="Task id (repeatable).")
    ] = None,
    profile: Annotated[
        list[str] | None,
        typer.Option(
            "--profile", "-p", help="Latency preset name or profile YAML file (repeatable)."
        ),
    ] = None,
    profile_set: ProfileSetOpt = None,
    sandbox: Annotated[str, typer.Option(help="Sandbox kind: local or docker.")] = "local",
) -> None:
    """Run one coding and one web task at 750 and 80 tok/s; print steps and times per run."""
    from looplab.agents.trial import run_trial
    from looplab.tasks import list_tasks

    if sandbox not in SANDBOX_KINDS:
        raise ConfigError(
            f"unknown sandbox kind {sandbox!r}", field="--sandbox", allowed=SANDBOX_KINDS
        )
    known = set(list_tasks())
    for name in task or []:
        if name not in known:
            raise ConfigError(f"unknown task {name!r}", field="--task", allowed=sorted(known))
    tasks = task or [name for name in DEFAULT_TASKS if name in known]
    presets = profile or ["fast-750", "slow-80"]
    config = SandboxConfig(kind="docker" if sandbox == "docker" else "local")
    rows = asyncio.run(run_trial(tasks, presets, overrides=profile_set or [], sandbox=config))
    table = Table(title="scripted reference solutions (total excludes sandbox/browser start)")
    columns = ("preset", "task", "steps", "model s", "tool s", "total s", "start s", "solved")
    for column in columns:
        table.add_column(column, justify="right", no_wrap=True)
    for row in rows:
        result = row.run.result
        table.add_row(
            row.preset,
            row.task,
            str(row.steps),
            f"{result.model_s:.2f}",
            f"{result.tool_s:.2f}",
            f"{result.wall_s:.2f}",
            f"{row.run.sandbox_start_s + row.run.browser_start_s:.2f}",
            "yes" if row.run.solved else f"NO ({result.end_reason})",
        )
    console = out_console()
    console.width = max(console.width, 110)  # all eight columns, even when piped
    console.print(table)
