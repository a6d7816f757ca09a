"""`SandboxPool`: sandboxes started ahead of need, so start is off the critical path.

The pool keeps `size` empty sandboxes ready; `acquire` hands one out at once (copying the
task's files in) and starts a replacement in the background. Each sandbox's own `create`
event still records its start; `acquire` emits an `acquire` event for the hand-out.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from looplab.sandbox_contract import EventSink, Sandbox
from looplab.sandboxes._support import EventClock

__all__ = ["SandboxFactory", "SandboxPool", "copy_into"]

SandboxFactory = Callable[[], Awaitable[Sandbox]]


class SandboxPool:
    """A warm pool of empty sandboxes made by one factory."""

    def __init__(self, factory: SandboxFactory, size: int, *, sink: EventSink | None = None):
        """Args: factory: makes one empty sandbox; size: how many to keep ready;
        sink: receives `acquire` events."""
        self._factory = factory
        self.size = size
        self._sink = sink
        self._ready: asyncio.Queue[Sandbox] = asyncio.Queue()
        self._filling: set[asyncio.Task[None]] = set()
        self._closed = False

    async def start(self) -> None:
        """Start filling the pool and wait until it is full."""
        self._top_up()
        await self.wait_ready()

    async def wait_ready(self) -> None:
        """Wait until every background start has finished."""
        while self._filling:
            await asyncio.gather(*list(self._filling), return_exceptions=True)

    async def acquire(self, task_dir: Path | None = None) -> Sandbox:
        """Return a started sandbox (a ready one if any) with `task_dir` copied in.

        Raises:
            SandboxError, PrerequisiteError: as the factory's, when none was ready.
        """
        begun = EventClock.start()
        warm = not self._ready.empty()
        sandbox = self._ready.get_nowait() if warm else await self._factory()
        self._top_up()
        if task_dir is not None:
            await copy_into(sandbox, task_dir)
        kind = str(getattr(sandbox, "kind", "unknown"))
        EventClock(self._sink, kind, sandbox.isolated).emit(
            "acquire", sandbox.id, begun, {"warm": warm}
        )
        return sandbox

    async def close(self) -> None:
        """Stop filling and close every sandbox still in the pool; idempotent."""
        self._closed = True
        for task in list(self._filling):
            task.cancel()
        await asyncio.gather(*list(self._filling), return_exceptions=True)
        while not self._ready.empty():
            await self._ready.get_nowait().close()

    def _top_up(self) -> None:
        """Start background creations until ready + starting reaches `size`."""
        while not self._closed and self._ready.qsize() + len(self._filling) < self.size:
            task = asyncio.get_running_loop().create_task(self._fill_one())
            self._filling.add(task)
            task.add_done_callback(self._filling.discard)

    async def _fill_one(self) -> None:
        """Create one sandbox into the pool (closed at once if the pool closed meanwhile)."""
        sandbox = await self._factory()
        if self._closed:
            await sandbox.close()
        else:
            self._ready.put_nowait(sandbox)

    async def __aenter__(self) -> SandboxPool:
        """Start the pool."""
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Close the pool."""
        await self.close()


async def copy_into(sandbox: Sandbox, directory: Path) -> None:
    """Write every file under `directory` into the sandbox's workspace (same layout)."""
    for folder, _dirs, files in os.walk(directory):
        for name in files:
            source = Path(folder, name)
            with contextlib.suppress(FileNotFoundError):
                data = await asyncio.to_thread(source.read_bytes)
                await sandbox.write_file(str(source.relative_to(directory)), data)
