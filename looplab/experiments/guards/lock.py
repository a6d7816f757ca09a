"""One writer per experiment directory: an advisory lock, `<dir>/.lock`.

`hold_directory` takes an exclusive `flock` on the lock file and writes its owner into it
(pid, host, start time); a second `looplab run` on the same directory is refused with a
ConfigError naming that owner. The kernel drops a `flock` when its process dies, however
it dies, so the lock of a killed run is stale the moment it ends and the next run takes
it over (and rewrites the owner). Holding is reentrant within one process (the CLI holds
it across `prepare_directory` and `run`, which each hold it too).

It also makes the directory, and turns every way that can fail (a regular file, a device,
/proc, a read-only place) into a ConfigError naming `output_dir`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from looplab.clock import utc_now
from looplab.errors import ConfigError
from looplab.layout import ExperimentDir

__all__ = ["LOCK_NAME", "check_directory", "hold_directory", "lock_owner", "make_directory"]

LOCK_NAME = ExperimentDir(Path()).lock.name
"""The lock file's name inside an experiment directory."""

_held: dict[Path, list[int]] = {}
"""Directories this process holds -> [lock file descriptor, depth]."""


def check_directory(directory: Path) -> None:
    """Whether `directory` could hold an experiment, without writing anything: not an
    existing non-directory, and its nearest existing ancestor a writable directory on a
    disk file system (not /proc or /sys, which have no blocks).

    Raises:
        ConfigError: it cannot (names `output_dir` and why).
    """
    try:
        if directory.exists() and not directory.is_dir():
            raise _unusable(directory, "it exists and is not a directory")
        nearest = directory.absolute()
        while not nearest.exists() and nearest != nearest.parent:
            nearest = nearest.parent
        if not (nearest.is_dir() and os.access(nearest, os.W_OK | os.X_OK)):
            raise _unusable(directory, f"{nearest} is not a writable directory")
        if os.statvfs(nearest).f_blocks == 0:
            raise _unusable(directory, f"{nearest} is not on a disk file system")
    except OSError as exc:
        raise _unusable(directory, exc.strerror or str(exc)) from None


def make_directory(directory: Path) -> None:
    """Create `directory` (and parents) for an experiment, or check an existing one.

    Raises:
        ConfigError: it cannot be a directory looplab writes (names `output_dir`).
    """
    check_directory(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        usable = directory.is_dir() and os.access(directory, os.W_OK | os.X_OK)
    except OSError as exc:
        raise _unusable(directory, exc.strerror or str(exc)) from None
    if not usable:
        raise _unusable(directory, "not a writable directory")


def lock_owner(directory: Path) -> str:
    """Who holds (or last held) the lock of `directory`, in words."""
    try:
        data = json.loads((directory / LOCK_NAME).read_text(encoding="utf-8"))
        return f"pid {data['pid']} on host {data['host']}, since {data['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "an unknown process"


@contextlib.contextmanager
def hold_directory(directory: Path) -> Iterator[None]:
    """Hold the experiment directory's lock for the block (made first if needed).

    Raises:
        ConfigError: another process holds it (the message names it), or the directory
            cannot be made (see `make_directory`).
    """
    key = directory.absolute()
    if key in _held:
        _held[key][1] += 1
        try:
            yield
        finally:
            _held[key][1] -= 1
        return
    make_directory(directory)
    fd = _acquire(directory)
    _held[key] = [fd, 1]
    try:
        yield
    finally:
        del _held[key]
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)  # releases the flock


def _acquire(directory: Path) -> int:
    """Open and lock `<directory>/.lock`, write this owner; its descriptor."""
    path = directory / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise _unusable(directory, exc.strerror or str(exc)) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ConfigError(
            f"{directory} is being written by another looplab run ({lock_owner(directory)}); "
            "wait for it to end, or give this run another output_dir",
            field="output_dir",
        ) from None
    except OSError as exc:
        os.close(fd)
        raise _unusable(directory, f"cannot lock {LOCK_NAME}: {exc.strerror}") from None
    owner = {"pid": os.getpid(), "host": socket.gethostname(), "since": utc_now().isoformat()}
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps(owner).encode())
    return fd


def _unusable(directory: Path, why: str) -> ConfigError:
    return ConfigError(
        f"{directory} cannot hold an experiment ({why}); give a directory path "
        "looplab may create and write",
        field="output_dir",
    )
