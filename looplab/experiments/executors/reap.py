"""Leave no local Ray process behind: the descendants of this process, found before
`ray.shutdown()`, waited for after it and killed if they outlive a bound.

`ray.shutdown()` stops the raylet and the GCS it started (`address: local`), but their
worker processes exit on their own once the raylet is gone, and on a loaded machine that
can be seconds after the command would have returned. `ProcessTree` makes "nothing
outlives the command" hold: made before `ray.init()`, it remembers the descendants that
already existed; its snapshot before the shutdown takes only the new ones whose command
line names Ray (pid + start time, so a reused pid is never touched); `settle` waits up to
`grace_s` for them to exit and SIGKILLs the rest. Nothing else this process started (a
test runner's servers, say) is ever touched.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

__all__ = ["ProcessTree", "descendants"]


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, start ticks) of a live process, None when it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # the command name may hold spaces
    if fields[0] == "Z":
        return None
    return int(fields[1]), fields[19]


def descendants(root: int | None = None) -> dict[int, str]:
    """Live descendants of `root` (default: this process): pid -> start ticks."""
    parents: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (info := _stat(int(entry))) is not None:
            parents.setdefault(info[0], []).append(int(entry))
            starts[int(entry)] = info[1]
    found: dict[int, str] = {}
    todo = [os.getpid() if root is None else root]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found[child] = starts[child]
                todo.append(child)
    return found


def _alive(processes: dict[int, str]) -> dict[int, str]:
    return {p: t for p, t in processes.items() if (info := _stat(p)) and info[1] == t}


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


class ProcessTree:
    """Descendants started after this object, whose command line holds `match`."""

    def __init__(self, match: bytes = b"ray") -> None:
        self.match = match
        self.before = set(descendants())
        self.processes: dict[int, str] = {}

    def snapshot(self) -> None:
        """Remember the matching descendants started since (call it before the shutdown)."""
        self.processes |= {
            pid: start
            for pid, start in descendants().items()
            if pid not in self.before and self.match in _cmdline(pid)
        }

    def settle(self, grace_s: float = 10.0) -> list[int]:
        """Wait up to `grace_s` for the remembered processes to exit; SIGKILL the rest.

        Returns:
            The pids that had to be killed.
        """
        deadline = time.monotonic() + grace_s
        while (alive := _alive(self.processes)) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return sorted(alive)
