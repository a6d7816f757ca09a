"""SIGTERM ends an experiment the way Ctrl-C does: cancelled, cleaned up, resumable.

Python's default SIGTERM action kills the process on the spot, skipping every `finally`:
sandboxes, services and temporary directories would be left behind. Inside
`cancel_on_sigterm()`, SIGTERM cancels the running task instead, so every cell's clean-up
runs; the experiment then raises `Terminated` (a `KeyboardInterrupt`, so whatever handles
Ctrl-C handles it too, with `exit_code` 143 instead of 130).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator

__all__ = ["Terminated", "cancel_on_sigterm"]


class Terminated(KeyboardInterrupt):
    """The experiment was stopped by a signal after cleaning up.

    Attributes:
        signum: the signal (SIGTERM).
        exit_code: the conventional exit status, 128 + signum.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum
        self.exit_code = 128 + signum


@contextlib.contextmanager
def cancel_on_sigterm() -> Iterator[list[int]]:
    """While inside, SIGTERM cancels the current task; yields the signals received.

    Outside the main thread (where signal handlers cannot be installed) it does nothing.
    """
    received: list[int] = []
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()

    def handler() -> None:
        received.append(signal.SIGTERM)
        if task is not None:
            task.cancel()

    previous = signal.getsignal(signal.SIGTERM)
    try:
        loop.add_signal_handler(signal.SIGTERM, handler)
    except (NotImplementedError, RuntimeError, ValueError):
        yield received
        return
    try:
        yield received
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        signal.signal(signal.SIGTERM, previous)  # asyncio would leave SIG_DFL
