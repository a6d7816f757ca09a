"""The in-sandbox helper's process functions, also used on the host (`leftovers.py`,
`_confine.py`): one home for the process-tree logic.

Part of the helper's source (`_channel.helper_source` joins `_inside_procs.py`,
`_inside_files.py` and `_inside.py`, dropping their `from looplab.` lines): stdlib only,
no side effects on import.
"""

import contextlib
import os
import signal
import time
from collections.abc import Callable

SANDBOX_ENV = "LOOPLAB_SANDBOX"
"""Marks every process of one sandbox (value: the sandbox's token)."""
EXEC_ENV = "LOOPLAB_EXEC"
"""Marks every process of one command (value: `<sandbox token>.<n>`)."""
OWNER_ENV = "LOOPLAB_OWNER"
"""Marks every sandbox process with its owner (`host:pid:start-ticks`), for prune."""


def process_table() -> dict[int, tuple[str, int, int]]:
    """Every visible process: pid -> (state, parent pid, process group)."""
    table: dict[int, tuple[str, int, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) >= 3:
            table[int(name)] = (fields[0], int(fields[1]), int(fields[2]))
    return table


def environ_of(pid: int) -> list[bytes]:
    """The environment entries (`NAME=value`) of a process; empty when unreadable."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return handle.read().split(b"\0")
    except OSError:
        return []


def marked(name: str, value: str, *, exclude: int | None = None) -> set[int]:
    """Live (non-zombie) processes whose environment holds `name=value` exactly."""
    entry = f"{name}={value}".encode()
    found = set()
    for pid, (state, _, _) in process_table().items():
        if pid != exclude and state not in "ZX" and entry in environ_of(pid):
            found.add(pid)
    return found


def tree_of(root: int, *, marker: tuple[str, str] | None = None) -> set[int]:
    """Live processes of a command: its group, its descendants, and those with its marker."""
    table = process_table()
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = {pid for pid, (_, _, pgrp) in table.items() if pgrp == root}
    stack = [root]
    while stack:
        pid = stack.pop()
        found.add(pid)
        stack.extend(c for c in children.get(pid, []) if c not in found)
    if marker is not None:
        entry = f"{marker[0]}={marker[1]}".encode()
        found |= {pid for pid in table if entry in environ_of(pid)}
    me = os.getpid()
    return {p for p in found if p in table and table[p][0] not in "ZX" and p != me}


def kill_until_gone(select: Callable[[], set[int]], *, wait_s: float = 5.0) -> set[int]:
    """SIGKILL whatever `select` returns until it returns nothing; the survivors at `wait_s`."""
    deadline = time.monotonic() + wait_s
    while True:
        victims = select()
        if not victims or time.monotonic() > deadline:
            return victims
        for pid in victims:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def stop_group(pgid: int, grace_s: float) -> dict[str, object]:
    """TERM a process group, KILL what is left after `grace_s`, and check it is gone."""

    def members() -> set[int]:
        return {p for p, (state, _, g) in process_table().items() if g == pgid and state != "Z"}

    if not members():
        return {"pgid": pgid, "signal": None, "survivors": []}
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while members() and time.monotonic() < deadline:
        time.sleep(0.02)
    sent = "TERM" if not members() else "KILL"
    survivors = kill_until_gone(members) if sent == "KILL" else set()
    return {"pgid": pgid, "signal": sent, "survivors": sorted(survivors)}
