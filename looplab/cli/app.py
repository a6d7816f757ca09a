"""The `looplab` command line: assembles every package's commands into one typer app.

Each package owns its commands in its `commands.py`; this module only registers them
(the tables below), sets up logging in the root callback and turns exceptions into exit
codes (`main`). The shared flags are in `looplab.console`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from looplab import __version__
from looplab.agents import commands as agents_commands
from looplab.backends import commands as backend_commands
from looplab.backends.proxy import commands as proxy_commands
from looplab.bench.commands import BENCHES
from looplab.claims import commands as claims_commands
from looplab.cli.logs import LOG_LEVELS, configure_logging
from looplab.errors import ConfigError
from looplab.experiments import commands as experiment_commands
from looplab.experiments.guards import doctor_commands
from looplab.report import commands as report_commands
from looplab.sandboxes import commands as sandbox_commands
from looplab.traces import commands as trace_commands
from looplab.traces.collect import commands as collect_commands
from looplab.workloads import commands as workload_commands

__all__ = ["APPS", "COMMANDS", "GROUPS", "app", "build_app"]

Command = Callable[..., Any]

COMMANDS: dict[str, Command] = {
    "run": experiment_commands.run_command,
    "doctor": doctor_commands.doctor_command,
    "replay": experiment_commands.replay_command,
    "sweep": experiment_commands.sweep_command,
    "import": trace_commands.import_command,
    "collect": collect_commands.collect_command,
    "calibrate": workload_commands.calibrate_command,
    "report": report_commands.report_command,
    "dashboard": report_commands.dashboard_command,
    "schema": trace_commands.schema_command,
    "serve": backend_commands.serve_command,
    "proxy": proxy_commands.proxy_command,
    "wrap": proxy_commands.wrap_command,
    "profiles": backend_commands.profiles_command,
    "demo": backend_commands.demo_command,
}
"""Top-level commands, in the order `looplab --help` lists them."""

GROUPS: dict[str, tuple[str, dict[str, Command]]] = {
    "export": (
        "Export traces to other tools' formats.",
        {
            "otel": trace_commands.export_otel_command,
            "atif": trace_commands.export_atif_command,
            "mooncake": trace_commands.export_mooncake_command,
            "inference-perf": trace_commands.export_inference_perf_command,
        },
    ),
    "agents": ("Run the bundled agents on bundled tasks.", {"try": agents_commands.try_command}),
    "sandbox": (
        "Sandbox images and leftovers.",
        {"build": sandbox_commands.build_command, "prune": sandbox_commands.prune_command},
    ),
    "bench": (
        "Benchmarks that print side-by-side numbers (medians and ratios).",
        BENCHES,
    ),
}
"""Command groups: name -> (help, sub-commands)."""

APPS: dict[str, Callable[[], typer.Typer]] = {"claims": claims_commands.claims_app}
"""Groups that build their own typer app (e.g. one that also runs without a sub-command)."""

DEFAULT_LOG_FILE = Path(".looplab/logs/looplab.jsonl")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"looplab {__version__}")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    log_level: Annotated[
        str, typer.Option("--log-level", help="Console log level: debug, info, warning, error.")
    ] = "warning",
    log_file: Annotated[
        Path | None,
        typer.Option(
            "--log-file",
            help="JSON-lines log file, all levels (default .looplab/logs/looplab.jsonl, "
            "or $LOOPLAB_LOG_FILE).",
            show_default=False,
        ),
    ] = None,
    no_log_file: Annotated[
        bool, typer.Option("--no-log-file", help="Do not write the JSON log file.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Agent-loop latency lab: how per-step inference latency compounds across agent tasks.

    Logs go to stderr (readable) and to a JSON-lines file.
    """
    if log_level.lower() not in LOG_LEVELS:
        raise ConfigError(
            f"unknown log level {log_level!r}", field="--log-level", allowed=LOG_LEVELS
        )
    default = Path(os.environ.get("LOOPLAB_LOG_FILE") or DEFAULT_LOG_FILE)
    setup = functools.partial(
        configure_logging, log_level, None if no_log_file else (log_file or default)
    )
    setup()
    ctx.obj = {"log_setup": setup}  # for commands that start worker processes (`serve`)


def build_app() -> typer.Typer:
    """The `looplab` app with every command and group registered."""
    root = typer.Typer(
        name="looplab",
        no_args_is_help=True,
        rich_markup_mode="rich",
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    root.callback()(_root)
    for name, command in COMMANDS.items():
        root.command(name)(command)
    for group, (help_text, commands) in GROUPS.items():
        sub = typer.Typer(help=help_text, no_args_is_help=True)
        for name, command in commands.items():
            sub.command(name)(command)
        root.add_typer(sub, name=group)
    for group, build in APPS.items():
        root.add_typer(build(), name=group)
    return root


app = build_app()
