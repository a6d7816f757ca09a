"""The local helper's stderr, read so that a failed start can say what bubblewrap said.

bubblewrap writes why it cannot start (`bwrap: Creating new namespace failed: ...`) on its
stderr and exits; the host then only saw the helper's pipe close ("sandbox helper cannot be
reached: Connection lost"; issue 47, finding 9). `StderrTail` drains the helper's stderr
for its whole life (so the pipe never fills and blocks it), keeps the first
`KEPT_BYTES`, and gives them to the start's error.
"""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["KEPT_BYTES", "StderrTail"]

KEPT_BYTES = 4096
"""Bytes of the helper's stderr kept (bubblewrap's own message is one line)."""


class StderrTail:
    """Drains a process's stderr in a task, keeping its first `KEPT_BYTES`."""

    def __init__(self, stream: asyncio.StreamReader | None) -> None:
        """Start draining `stream` (None: nothing to read)."""
        self._kept = bytearray()
        self._task = None if stream is None else asyncio.ensure_future(self._drain(stream))

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            room = KEPT_BYTES - len(self._kept)
            if room > 0:
                self._kept += chunk[:room]

    async def said(self, process: asyncio.subprocess.Process, wait_s: float = 2.0) -> str:
        """What the process wrote on stderr, once it exited (waiting at most `wait_s`)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), wait_s)
        if self._task is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._task), 0.5)
        return " ".join(self._kept.decode("utf-8", "replace").split())
