"""The `looplab` command line: assembles every package's commands into one typer app.

Each package owns its commands in its `commands.py`; this module only registers them
(the tables below name them as `module:function`, imported when registered: `main` builds
the app with the one command it runs, `looplab profiles` starting in 0.3 s instead of 0.7 s),
sets up logging in the root callback and turns exceptions into exit
codes (`main`). The shared flags are in `looplab.console`.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from looplab import __version__
from looplab.cli.logs import LOG_LEVELS, configure_logging
from looplab.errors import ConfigError

__all__ = ["APPS", "COMMANDS", "GROUPS", "build_app", "command_named"]  # and `app` (lazy)

Command = Callable[..., Any]

COMMANDS: dict[str, str] = {
    "run": "looplab.experiments.commands:run_command",
    "doctor": "looplab.experiments.guards.doctor_commands:doctor_command",
    "replay": "looplab.experiments.commands:replay_command",
    "sweep": "looplab.experiments.commands:sweep_command",
    "import": "looplab.traces.commands:import_command",
    "collect": "looplab.traces.collect.commands:collect_command",
    "calibrate": "looplab.workloads.commands:calibrate_command",
    "report": "looplab.report.commands:report_command",
    "dashboard": "looplab.report.commands:dashboard_command",
    "diff": "looplab.report.commands:diff_command",
    "choose": "looplab.report.choose_commands:choose_command",
    "schema": "looplab.traces.commands:schema_command",
    "serve": "looplab.backends.commands:serve_command",
    "proxy": "looplab.backends.proxy.commands:proxy_command",
    "wrap": "looplab.backends.proxy.commands:wrap_command",
    "profiles": "looplab.backends.commands:profiles_command",
    "demo": "looplab.backends.commands:demo_command",
}
"""Top-level commands (`module:function`, imported when registered), in the order `looplab
--help` lists them."""

GROUPS: dict[str, tuple[str, dict[str, str] | str]] = {
    "export": (
        "Export traces to other tools' formats.",
        {
            "otel": "looplab.traces.commands:export_otel_command",
            "atif": "looplab.traces.commands:export_atif_command",
            "mooncake": "looplab.traces.commands:export_mooncake_command",
            "inference-perf": "looplab.traces.commands:export_inference_perf_command",
        },
    ),
    "agents": (
        "Run the bundled agents on bundled tasks.",
        {"try": "looplab.agents.commands:try_command"},
    ),
    "sandbox": (
        "Sandbox images and leftovers.",
        {
            "build": "looplab.sandboxes.commands:build_command",
            "prune": "looplab.sandboxes.commands:prune_command",
        },
    ),
    "bench": (
        "Benchmarks that print side-by-side numbers (medians and ratios).",
        "looplab.bench.commands:BENCHES",
    ),
}
"""Command groups: name -> (help, sub-commands: name -> `module:function`, or the
`module:table` of a package's own name -> command table)."""

APPS: dict[str, str] = {"claims": "looplab.claims.commands:claims_app"}
"""Groups that build their own typer app (e.g. one that also runs without a sub-command):
name -> `module:builder`."""

_ROOT_VALUED = ("--log-level", "--log-file")
"""Root options that take a value (skipped when finding the command in argv)."""


def _load(ref: str) -> Any:
    """The object a `module:attribute` reference names (importing its module)."""
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)


def command_named(argv: Sequence[str]) -> str | None:
    """The command or group `argv` invokes (the first word after the root options), if it
    is one of ours; None for `--help`, `--version`, nothing or an unknown word."""
    words = iter(argv)
    for word in words:
        if word in _ROOT_VALUED:
            next(words, None)
        elif not word.startswith("-"):
            return word if word in COMMANDS or word in GROUPS or word in APPS else None
    return None


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


def build_app(only: str | None = None) -> typer.Typer:
    """The `looplab` app with every command and group registered, or with just `only` (a
    name of `COMMANDS`, `GROUPS` or `APPS`): what `main` runs, so a command imports its own
    package and not every other's (a third of a second of start-up)."""
    root = typer.Typer(
        name="looplab",
        no_args_is_help=True,
        rich_markup_mode="rich",
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    root.callback()(_root)

    def wanted(name: str) -> bool:
        return only is None or name == only

    for name, ref in COMMANDS.items():
        if wanted(name):
            root.command(name)(_load(ref))
    for group, (help_text, commands) in GROUPS.items():
        if not wanted(group):
            continue
        sub = typer.Typer(help=help_text, no_args_is_help=True)
        table: dict[str, Command] = (
            _load(commands)
            if isinstance(commands, str)
            else {name: _load(ref) for name, ref in commands.items()}
        )
        for name, command in table.items():
            sub.command(name)(command)
        root.add_typer(sub, name=group)
    for group, ref in APPS.items():
        if wanted(group):
            root.add_typer(_load(ref)(), name=group)
    return root


@functools.cache
def _full_app() -> typer.Typer:
    return build_app()


def __getattr__(name: str) -> Any:
    """`app`: the full app, built on first use (tests drive it with typer's CliRunner)."""
    if name == "app":
        return _full_app()
    raise AttributeError(name)
