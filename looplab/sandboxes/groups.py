"""Stopping detached process groups inside any sandbox (a task's services), without a shell.

`stop_groups_argv` is the command to `exec` in the sandbox: the in-sandbox helper's
`stop-groups` mode (`_inside.py`) reads each pid file, sends the group SIGTERM, waits up to
the grace period, sends SIGKILL to what is left and checks the group is gone.
`parse_stop_report` reads what it printed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from looplab.sandboxes._channel import helper_source

__all__ = ["GroupStop", "parse_stop_report", "stop_groups_argv"]


@dataclass(frozen=True)
class GroupStop:
    """How one process group was stopped.

    Attributes:
        pgid: the group (its leader's pid, inside the sandbox).
        signal: `TERM` (it exited on SIGTERM), `KILL` (it needed SIGKILL), None (it was gone).
        survivors: pids still alive after SIGKILL (empty when the group is gone).
    """

    pgid: int
    signal: str | None
    survivors: tuple[int, ...]


def stop_groups_argv(grace_s: float, pidfiles: Sequence[str]) -> list[str]:
    """The argv that stops the groups whose leaders' pids are in `pidfiles` (missing: skipped)."""
    return ["python3", "-c", helper_source(), "stop-groups", str(grace_s), *pidfiles]


def parse_stop_report(stdout: str) -> list[GroupStop]:
    """The groups `stop_groups_argv` stopped.

    Raises:
        ValueError: the output is not the helper's report.
    """
    items = json.loads(stdout)
    if not isinstance(items, list):
        raise ValueError("not a stop report")
    return [
        GroupStop(int(i["pgid"]), i.get("signal"), tuple(int(p) for p in i.get("survivors", [])))
        for i in items
    ]
