"""Several server processes behind one port, and the parent that supervises them.

One Python process paces only so many streams (its event loop is one core), so
`looplab serve --workers N` runs N worker processes that all listen on the same
host:port with `SO_REUSEPORT` (Linux). Why that and not one listening socket shared by
all workers: with `SO_REUSEPORT` each worker has its own accept queue and the kernel
spreads new connections over them by a hash of the 4-tuple, evenly, with no thundering
herd; a shared socket wakes every worker's epoll for each connection and the winner is
whichever loop happens to be idle first, which under load leaves the spread uneven.
Streams are long-lived, kept-alive connections, so an even spread of connections is an
even spread of streams. The cost: a dead worker's not-yet-accepted connections are
reset (the kernel then routes new ones to the others).

Contracts:
- `reserve_port(host, port)` binds (not listens) a `SO_REUSEPORT` socket: it resolves
  port 0 and holds the port for the workers (only processes of the same user may join
  the group), and is closed by the parent last.
- `die_with_parent(pid)` in a worker: the kernel sends it SIGTERM when the parent dies,
  even by SIGKILL, so no worker outlives the command.
- `supervise(processes, ...)` returns when SIGTERM/SIGINT arrives or every worker is
  gone; a worker that dies on its own is reported through `on_death` once. On return
  every worker has been sent SIGTERM, given `grace_s` to drain, then SIGKILLed, and
  joined: nothing it started is left running.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from types import FrameType

from looplab.errors import ConfigError
from looplab.serving.guard import listening_socket

__all__ = ["death_reason", "die_with_parent", "reserve_port", "reuseport_socket", "supervise"]

_PR_SET_PDEATHSIG = 1


def reuseport_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port` with `SO_REUSEPORT` (not listening yet).

    Raises:
        ConfigError: not Linux (no load-balancing `SO_REUSEPORT`), or the bind failed
            (`--port` named).
    """
    if sys.platform != "linux" or not hasattr(socket, "SO_REUSEPORT"):
        raise ConfigError(
            "--workers above 1 needs Linux (SO_REUSEPORT spreads connections over workers)",
            field="--workers",
        )
    sock = listening_socket(host)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot bind {host}:{port}: {exc.strerror}", field="--port") from None
    return sock


def reserve_port(host: str, port: int) -> tuple[socket.socket, int]:
    """The parent's bound, non-listening `SO_REUSEPORT` socket and its port (port 0
    resolved). It takes no connections; it keeps the port for the workers until closed.

    Raises:
        ConfigError: see `reuseport_socket`.
    """
    sock = reuseport_socket(host, port)
    return sock, int(sock.getsockname()[1])


def die_with_parent(parent_pid: int) -> None:
    """Ask the kernel for SIGTERM when the parent dies; exit now if it already has."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent_pid:  # it died before the request took effect
        os._exit(0)


def death_reason(exitcode: int | None) -> str:
    """`exit code 3`, `killed by SIGKILL`, from a `multiprocessing` exit code."""
    if exitcode is None:
        return "still running"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


def supervise(
    processes: Sequence[BaseProcess],
    *,
    grace_s: float,
    on_death: Callable[[int, BaseProcess], None],
    poll_s: float = 0.2,
) -> bool:
    """Wait for SIGTERM/SIGINT or every process gone, then stop them all (module
    docstring); True when stopped by a signal, False when every process died first.

    `on_death(index, process)` is called once per process that exits before the stop.
    """
    stopping: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    reported: set[int] = set()
    try:
        while not stopping:
            live = [p.sentinel for i, p in enumerate(processes) if i not in reported]
            if not live:
                return False
            wait(live, timeout=poll_s)
            for index, process in enumerate(processes):
                if index not in reported and not process.is_alive() and not stopping:
                    reported.add(index)
                    on_death(index, process)
        return True
    finally:
        stop_all(processes, grace_s)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def stop_all(processes: Sequence[BaseProcess], grace_s: float) -> None:
    """SIGTERM every live process, wait up to `grace_s` for all, SIGKILL the rest, join."""
    processes = [p for p in processes if p.pid is not None]  # started ones only
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + grace_s
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.kill()
        process.join()
