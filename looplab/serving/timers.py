"""An asyncio event loop whose timers fire within microseconds, not a millisecond.

The stock loop waits with `epoll_wait`, whose timeout is whole milliseconds rounded up,
so a sleeper wakes 0-1 ms late (0.5 ms on average): a paced token, a TTFT, a proxy's
release. And Linux lets any poll or select wait of t seconds end up to t/1000 late
(its timer slack), 0.3 ms for a 0.3 s TTFT. `PreciseSelector` keeps epoll for the
events and waits for the timeout with `select()` on the epoll descriptor itself
(epoll(7): it is readable when an event is ready), whose timeout is in microseconds, in
two parts, most of it and then the last millisecond, and polls the last 0.3 ms of a
wait of 10 ms or more (a CPU idle that long woke ~0.2 ms late here, stamped by hand
with and without the poll); then it collects the
events without waiting. Measured by `looplab bench timers` (p50, quiet 2-core VM): a
0.3 s sleep (a TTFT) ends 0.13 ms late instead of 0.69 ms, a 12.5 ms one (a token at 80
tok/s) 0.01 ms instead of 1.6 ms, a 1.33 ms one (750 tok/s) 0.09 ms instead of 0.77 ms;
none early.

`run_server(server, sockets)` runs a uvicorn server on such a loop; the servers that pace
tokens (`looplab serve`, `looplab proxy`, and every in-process `AppServer`) go through it.
`has_precise_timers()` tells code on the running loop whether it may rely on that (the
pacer then wakes at the due time itself instead of half a millisecond before it).
"""

from __future__ import annotations

import asyncio
import selectors
import signal
import socket
import sys
import threading
import time
from collections.abc import Sequence
from select import select

import uvicorn

__all__ = ["PreciseSelector", "has_precise_timers", "precise_loop", "run_server"]

_MARK = "looplab_precise_timers"
_TAIL_S = 0.001
"""The last part of a wait, waited apart from the rest (see `PreciseSelector.select`)."""
_SPIN_S = 0.0003
"""How much of a long wait is polled instead of slept: a CPU idle for a while wakes
~0.2 ms late, one kept busy does not."""
_SPIN_AFTER_S = 0.010
"""Waits from this long on end with a `_SPIN_S` poll (at most 3% of one core's time)."""
_FD_SETSIZE = 1024
"""`select()` takes descriptors below this only; a higher epoll descriptor falls back."""


if sys.platform == "linux":  # epoll is Linux's; elsewhere `precise_loop` is the stock loop

    class PreciseSelector(selectors.EpollSelector):
        """`EpollSelector` that waits with microsecond resolution (see the module docstring)."""

        def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
            """Ready events, waiting at most `timeout` seconds (None: until one is ready)."""
            fd = self.fileno()
            if timeout is not None and timeout > 0 and fd < _FD_SETSIZE:
                start = time.monotonic()
                # Linux lets a wait of t seconds end up to t/1000 late (its timer slack for
                # poll and select: 0.3 ms for a 0.3 s TTFT), so most of a long timeout is
                # waited first, then the rest, whose slack is the 50 us floor; the last
                # 0.3 ms of a long one is polled, as a CPU idle for a while wakes late.
                spin = _SPIN_S if timeout >= _SPIN_AFTER_S else 0.0
                for part in (timeout - max(_TAIL_S, timeout / 500), timeout - spin):
                    left = start + part - time.monotonic()
                    if left > 0 and select([fd], [], [], left)[0]:
                        return super().select(0)
                while time.monotonic() < start + timeout and not select([fd], [], [], 0)[0]:
                    pass
                timeout = 0
            return super().select(timeout)


def precise_loop() -> asyncio.AbstractEventLoop:
    """A new selector event loop with `PreciseSelector` (marked for `has_precise_timers`);
    where there is no epoll (not Linux), the stock loop, unmarked."""
    if sys.platform != "linux":
        return asyncio.new_event_loop()
    # SIGTERM/SIGINT wait until the loop is whole: `looplab`'s handlers raise, and raised
    # inside the constructor they would leave a half-made loop whose finaliser prints a
    # traceback (seen when a proxy was stopped just as it started serving). Python runs
    # handlers in the main thread only, so there they are swapped for a note, replayed after.
    signals = (signal.SIGTERM, signal.SIGINT)
    main = threading.current_thread() is threading.main_thread()
    if not main or any(signal.getsignal(sig) is None for sig in signals):
        return _marked_loop()  # None: a handler set outside Python, which cannot be put back
    noted: list[int] = []
    previous = {
        sig: signal.signal(sig, lambda number, _frame: noted.append(number)) for sig in signals
    }
    try:
        loop = _marked_loop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for number in noted:
        signal.raise_signal(number)
    return loop


def _marked_loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.SelectorEventLoop(PreciseSelector())
    setattr(loop, _MARK, True)
    return loop


def has_precise_timers(loop: asyncio.AbstractEventLoop | None = None) -> bool:
    """Whether `loop` (default: the running one) came from `precise_loop`."""
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
    return bool(getattr(loop, _MARK, False))


def run_server(server: uvicorn.Server, sockets: Sequence[socket.socket]) -> None:
    """Serve `server` on `sockets` on a `precise_loop` until it exits (blocking)."""
    with asyncio.Runner(loop_factory=precise_loop) as runner:
        runner.run(server.serve(sockets=list(sockets)))
