"""`looplab agents ...`: commands of the agents package (wired into looplab/cli.py)."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from looplab.sandbox import SandboxConfig

__all__ = ["app"]

app = typer.Typer(help="Run the bundled agents on bundled tasks.", no_args_is_help=True)
DEFAULT_TASKS = ["coding/fix-discount", "web/shop-checkout"]


@app.callback()
def agents() -> None:
    """Run the bundled agents on bundled tasks."""


@app.command("try")
def try_tasks(
    task: Annotated[
        list[str] | None, typer.Option("--task", "-t", help="Task id (repeatable).")
    ] = None,
    preset: Annotated[
        list[str] | None, typer.Option("--preset", "-p", help="Latency preset (repeatable).")
    ] = None,
    override: Annotated[
        list[str] | None, typer.Option("--profile-override", "-o", help="key=value on the profile.")
    ] = None,
    sandbox: Annotated[str, typer.Option(help="local or docker.")] = "local",
) -> None:
    """Run one coding and one web task at 750 and 80 tok/s; print steps and times per run."""
    from looplab.agents.taskset import list_tasks
    from looplab.agents.trial import run_trial

    known = set(list_tasks())
    tasks = task or [name for name in DEFAULT_TASKS if name in known]
    presets = preset or ["fast-750", "slow-80"]
    config = SandboxConfig(kind="docker" if sandbox == "docker" else "local")
    rows = asyncio.run(run_trial(tasks, presets, overrides=override or [], sandbox=config))
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
    console = Console()
    console.width = max(console.width, 110)  # all eight columns, even when piped
    console.print(table)
