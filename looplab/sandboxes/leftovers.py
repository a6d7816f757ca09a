"""What a looplab process leaves on the host, and how the next one removes it after a kill -9.

Everything a run starts on this host carries its owner (`owner.owner_label()`,
`host:pid:start-ticks`), the way containers carry the `looplab.owner` label:
- temporary directories hold an `.looplab-owner` file (`owned_tempdir`, `mark_owned`);
- processes started in a local sandbox carry `LOOPLAB_OWNER=<owner>` in their environment
  (set by the in-sandbox helper, `_inside.py`);
- local sandboxes' cgroups are named after their owner (`cgroup.py`).
A normal exit, an exception, Ctrl-C or SIGTERM removes them in `finally` blocks; after a
kill -9 nothing can, so `prune_host()` (called by `sandboxes.prune.prune`, i.e. by the
next experiment and by `looplab sandbox prune`) removes those whose owner is gone.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from looplab.sandboxes._inside_procs import OWNER_ENV, environ_of, kill_until_gone, process_table
from looplab.sandboxes.cgroup import owned_cgroups, stale_cgroups
from looplab.sandboxes.owner import owner_gone, owner_label

__all__ = [
    "OWNER_FILE",
    "HostPrune",
    "find_owned",
    "mark_owned",
    "owned_tempdir",
    "prune_host",
    "stale_dirs",
    "stale_processes",
]

OWNER_FILE = ".looplab-owner"
"""The owner marker inside a looplab temporary directory."""
DIR_PREFIX = "looplab-"


def mark_owned(directory: Path) -> Path:
    """Write this process's owner marker into `directory` (a looplab temporary directory)."""
    (directory / OWNER_FILE).write_text(owner_label())
    return directory


def owned_tempdir(prefix: str) -> Path:
    """A new temporary directory (`prefix` must start with `looplab-`) marked as ours."""
    if not prefix.startswith(DIR_PREFIX):
        raise ValueError(f"looplab temporary directories start with {DIR_PREFIX!r}: {prefix!r}")
    return mark_owned(Path(tempfile.mkdtemp(prefix=prefix)))


def stale_dirs(root: Path | None = None) -> list[Path]:
    """Marked looplab directories directly under `root` (default: the temp dir) whose owner
    is gone. Unmarked ones are never touched: they may belong to anything."""
    base = root or Path(tempfile.gettempdir())
    found = []
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            if not entry.name.startswith(DIR_PREFIX) or entry.is_symlink():
                continue
            try:
                owner = (entry / OWNER_FILE).read_text()
            except OSError:
                continue
            if owner_gone(owner.strip()):
                found.append(entry)
    return sorted(found)


def stale_processes() -> set[int]:
    """Processes started in a local sandbox whose owner process is gone."""
    prefix = f"{OWNER_ENV}=".encode()
    found = set()
    for pid, (state, _, _) in process_table().items():
        if state in "ZX":
            continue
        for entry in environ_of(pid):
            if entry.startswith(prefix):
                if owner_gone(entry[len(prefix) :].decode(errors="replace")):
                    found.add(pid)
                break
    return found


@dataclass
class HostPrune:
    """What `prune_host` removed (and what it could not)."""

    processes: list[int] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    cgroups: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def held(self) -> tuple[list[int], list[str], list[str]]:
        """(processes, dirs, cgroups): what an owner holds, to compare two `find_owned`."""
        return self.processes, self.dirs, self.cgroups


def find_owned(owner_pid: int, tmp_root: Path | None = None) -> HostPrune:
    """What the looplab process `owner_pid` (alive or not) has on this host right now:
    its sandboxes' processes, its marked temporary directories, its cgroups."""

    def mine(label: str) -> bool:
        parts = label.strip().split(":")
        return len(parts) == 3 and parts[1] == str(owner_pid)

    found = HostPrune()
    prefix = f"{OWNER_ENV}=".encode()
    for pid, (state, _, _) in process_table().items():
        entries = [e for e in environ_of(pid) if e.startswith(prefix)]
        if (
            state not in "ZX"
            and entries
            and mine(entries[0][len(prefix) :].decode("utf-8", "replace"))
        ):
            found.processes.append(pid)
    base = tmp_root or Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for entry in sorted(base.glob(f"{DIR_PREFIX}*")):
            with contextlib.suppress(OSError):
                if mine((entry / OWNER_FILE).read_text()):
                    found.dirs.append(str(entry))
    found.cgroups = [
        str(path) for path in owned_cgroups() if path.name.split(".")[1:2] == [str(owner_pid)]
    ]
    return found


def prune_host(tmp_root: Path | None = None) -> HostPrune:
    """Kill the processes, delete the directories and cgroups of looplab owners that are gone."""
    result = HostPrune()
    victims = stale_processes()
    survivors = kill_until_gone(lambda: stale_processes() & victims)
    result.processes = sorted(victims - survivors)
    result.failed += [f"process {pid}" for pid in sorted(survivors)]
    for group in stale_cgroups():
        label = group.paths[0].name
        (result.cgroups if group.remove() else result.failed).append(label)
    for directory in stale_dirs(tmp_root):
        shutil.rmtree(directory, ignore_errors=True)
        (result.failed if directory.exists() else result.dirs).append(str(directory))
    return result
