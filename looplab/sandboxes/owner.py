"""Who owns a sandbox container: `host:pid:start-ticks` of the process that made it.

The start time (from /proc) tells a live owner from a new process that reused its pid.
"""

from __future__ import annotations

import os
import socket
from functools import cache
from pathlib import Path

__all__ = ["owner_gone", "owner_label"]


def _start_ticks(pid: int) -> str | None:
    """Start time of a process in clock ticks since boot, or None when it does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces: count fields after its closing paren
    return stat.rsplit(")", 1)[1].split()[19]


@cache
def owner_label() -> str:
    """Return this process's owner label, `host:pid:start-ticks`."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_ticks(pid) or '?'}"


def owner_gone(label: str) -> bool:
    """True when `label` names a process of this host that no longer runs.

    Owners on other hosts (a shared remote engine) and unreadable labels count as alive:
    only `prune --all` removes their containers.
    """
    host, _, rest = label.partition(":")
    pid_text, _, ticks = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    current = _start_ticks(int(pid_text))
    if current is None:
        return True
    return ticks not in ("", "?") and current != ticks
