"""`looplab doctor`: the machine checks `looplab run` makes before its first cell, as a
table (commands; `looplab.cli.app` registers them). The checks are
`looplab.experiments.guards.preflight`'s."""

from __future__ import annotations

from rich.table import Table

from looplab.console import out_console

__all__ = ["doctor_command"]


def doctor_command() -> None:
    """What looplab needs from this machine (the checks `looplab run` makes before its
    first cell): Chromium, a Docker engine, bubblewrap, disk space, loopback ports, each
    with what needs it and the fix when it is missing."""
    from looplab.experiments.guards.preflight import Needs, run_checks

    table = Table(title="looplab doctor")
    for column in ("check", "status", "needed for", "detail", "fix"):
        table.add_column(column)
    for check in run_checks(Needs(browser=True, docker=True)):
        status = "[green]ok[/]" if check.ok else "[red]missing[/]"
        table.add_row(
            check.name, status, check.used_for, check.detail, "" if check.ok else check.fix
        )
    out_console().print(table)
