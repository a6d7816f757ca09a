"""Telling a full disk from other failures, so a run stops with one clear line.

A full disk shows up as `OSError(ENOSPC)` from a trace write, as a DuckDB `IOException`
("No space left on device") from the index, or as either inside an asyncio
`ExceptionGroup` (one per cell in flight). `disk_full_in` finds it in any of these and
returns the one `DiskFullError` the CLI prints; anything else is not disk-full.
"""

from __future__ import annotations

import errno
from pathlib import Path

from looplab.errors import DiskFullError

__all__ = ["disk_full_in", "is_disk_full"]

_MESSAGE = "no space left on device"


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc`, or an exception it was raised from or during, is a full disk."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DiskFullError):
            return True
        if isinstance(current, OSError) and current.errno == errno.ENOSPC:
            return True
        duckdb = type(current).__module__.lstrip("_").startswith("duckdb")
        if duckdb and _MESSAGE in str(current).lower():
            return True
        current = current.__cause__ or current.__context__
    return False


def disk_full_in(exc: BaseException, path: Path) -> DiskFullError | None:
    """The `DiskFullError` to raise for `exc` (naming `path` unless it names its own),
    looking inside exception groups; None when `exc` is no full disk."""
    if isinstance(exc, DiskFullError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = disk_full_in(inner, path)
            if found is not None:
                return found
        return None
    return DiskFullError(str(path)) if is_disk_full(exc) else None
