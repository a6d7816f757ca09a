"""`looplab serve --workers N`: N simulator processes behind one port, one `/health`.

Each worker is a whole simulator (its own `Simulator`, event loop and core) listening on
the command's host:port with `SO_REUSEPORT` (`looplab.serving.workers`: why, and the
parent's supervision). What the workers share is a `WorkerBoard`, an array of doubles
in shared memory with one row per worker; each worker writes only its own row (every
`PUBLISH_S` and whenever it answers `/health`), the parent writes a row's `alive` and
`exitcode` when that worker dies. So:

- `GET /health`, on whichever worker a connection lands, answers the totals over every
  worker (`active`, `queued`, `completed`, `late_releases`, `late_bursts`; the worst
  `worst_lateness_ms`), `workers`, `workers_alive` and a `per_worker` list. Another
  worker's row is at most `PUBLISH_S` old. A dead worker's counts stay in the totals
  (they happened); its `active` and `queued` do not. A worker is dead when the parent saw
  it exit, or when its row is over `STALE_S` old (stopped, hung, or killed before the
  parent saw it: its counts are frozen); then `status` is `degraded` and `dead_workers`
  names each with why, never `ok`.
- `GET /v1/looplab/requests/{id}/timing` answers from any worker: a worker that does
  not hold the record asks the others over their private loopback port (each worker
  also listens on one, published in its row; asked with `x-looplab-worker-local` so the
  question is not passed on again).

A worker's state is its own: the prefix cache and the admission limits
(`max_concurrency`, `max_queue`) are per worker. A load-dependent profile
(`batch_slowdown`, `server_max_tps`) would see 1/N of the load in each worker, so it is
refused with `--workers` above 1.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from looplab.backends.simulator.model import Simulator
from looplab.backends.simulator.server import create_app
from looplab.errors import BackendError, ConfigError
from looplab.latency.profile import LatencyProfile
from looplab.serving.appserver import app_config
from looplab.serving.guard import listening_socket
from looplab.serving.timers import run_server
from looplab.serving.workers import (
    death_reason,
    die_with_parent,
    reserve_port,
    reuseport_socket,
    stop_all,
    supervise,
)

__all__ = ["PUBLISH_S", "WorkerBoard", "WorkerSpec", "serve_workers"]

PUBLISH_S = 0.1
"""How often a worker writes its row of the board (its figures in others' `/health`)."""
LOCAL_HEADER = "x-looplab-worker-local"
"""Set on a timing question one worker asks another: answer from your own records."""
BACKLOG = 4096
START_TIMEOUT_S = 60.0
"""Seconds the workers have to come up (spawned interpreters import the simulator)."""
FIELDS = (
    "pid",
    "private_port",
    "ready",
    "alive",
    "exitcode",
    "active",
    "queued",
    "completed",
    "late_releases",
    "late_bursts",
    "worst_lateness_ms",
    "published",
)
STALE_S = 2.0
"""A row not written for this long (20 x `PUBLISH_S`) is a worker that no longer answers
(stopped, hung, or killed before the parent saw it): not counted as alive."""
_SUMMED = ("completed", "late_releases", "late_bursts")
_LIVE = ("active", "queued")


class WorkerBoard:
    """Per-worker figures in shared memory: row `i` is worker `i`'s `FIELDS`."""

    def __init__(self, array: Any, workers: int) -> None:
        self.array = array
        self.workers = workers

    @classmethod
    def create(cls, context: Any, workers: int) -> WorkerBoard:
        """A zeroed board for `workers` rows (`context`: a multiprocessing context)."""
        return cls(context.Array("d", workers * len(FIELDS), lock=False), workers)

    def set(self, index: int, **values: float) -> None:
        """Write fields of row `index` (each double is written whole)."""
        for name, value in values.items():
            self.array[index * len(FIELDS) + FIELDS.index(name)] = float(value)

    def row(self, index: int) -> dict[str, float]:
        """Row `index` as a dict."""
        start = index * len(FIELDS)
        return dict(zip(FIELDS, self.array[start : start + len(FIELDS)], strict=True))

    def publish(self, index: int, health: dict[str, Any]) -> None:
        """Row `index` from the worker's own `Simulator.health()`."""
        self.set(index, **{name: health[name] for name in (*_LIVE, *_SUMMED)})
        self.set(index, worst_lateness_ms=health["worst_lateness_ms"])
        self.set(index, published=time.monotonic())  # one clock for every process

    def totals(self, local: dict[str, Any]) -> dict[str, Any]:
        """`local` (one worker's health) with the load figures summed over the workers that
        answer; `status` is `degraded`, and `dead_workers` says why, when any does not (dead:
        the parent saw it exit; or its row is over `STALE_S` old: its counts are frozen)."""
        rows = [self.row(i) for i in range(self.workers)]
        now = time.monotonic()
        why = [_not_answering(r, now) for r in rows]
        alive = [r for r, reason in zip(rows, why, strict=True) if reason is None]
        totals = dict(local)
        for name in _LIVE:
            totals[name] = int(sum(r[name] for r in alive))
        for name in _SUMMED:
            totals[name] = int(sum(r[name] for r in rows))
        totals["streams"] = local["streams"] - local["active"] + totals["active"]
        totals["worst_lateness_ms"] = max(r["worst_lateness_ms"] for r in rows)
        totals["workers"] = self.workers
        totals["workers_alive"] = len(alive)
        dead = [
            f"worker {i} (pid {int(r['pid'])}) {w}"
            for i, (r, w) in enumerate(zip(rows, why, strict=True))
            if w
        ]
        if dead:
            totals["status"] = "degraded"
            totals["dead_workers"] = dead
        totals["per_worker"] = [
            {
                "worker": i,
                "pid": int(r["pid"]),
                "alive": why[i] is None,
                "exit": why[i],
                **{name: int(r[name]) for name in (*_LIVE, *_SUMMED)},
                "worst_lateness_ms": r["worst_lateness_ms"],
            }
            for i, r in enumerate(rows)
        ]
        return totals

    def private_ports(self, but: int) -> list[int]:
        """The private ports of the live workers other than `but`."""
        rows = [(i, self.row(i)) for i in range(self.workers) if i != but]
        return [int(r["private_port"]) for _, r in rows if r["alive"] and r["private_port"]]


def _not_answering(row: dict[str, float], now: float) -> str | None:
    """Why a worker's row is not a live worker's (None: it is)."""
    if not row["alive"]:
        return death_reason(int(row["exitcode"]))
    if now - row["published"] > STALE_S:
        return (
            f"not answering: its figures are {now - row['published']:.1f} s old (stopped or hung)"
        )
    return None


@dataclass(frozen=True)
class WorkerSpec:
    """What every worker serves, and where (picklable: sent to spawned workers)."""

    profile: LatencyProfile
    pacer: str
    host: str
    port: int
    drain_s: float
    workers: int
    parent_pid: int
    log_setup: Callable[[], None] | None = None
    """Called first in each worker: the command's logging set-up (levels, log file)."""


def serve_workers(
    spec: WorkerSpec,
    *,
    port_file: Path | None = None,
    announce: Callable[[int], None] = lambda port: None,
    report: Callable[[str], None] = print,
) -> int:
    """Serve `spec` on `spec.workers` processes until SIGTERM/SIGINT; the exit code.

    The port (0 resolved) is announced and written to `port_file` once every worker
    accepts connections. A worker that dies is reported (`report`, and `/health`) and
    not restarted; the others go on serving. Exit code 0, or 1 when a worker died.

    Raises:
        ConfigError: a load-dependent profile, not Linux, or the port cannot be bound.
        BackendError: a worker did not come up within `START_TIMEOUT_S`.
    """
    if spec.profile.batch_slowdown or spec.profile.server_max_tps is not None:
        raise ConfigError(
            "a load-dependent profile (batch_slowdown, server_max_tps) would see 1/N of "
            "the load in each of N workers; serve it with --workers 1",
            field="--workers",
        )
    reserve, bound = reserve_port(spec.host, spec.port)
    spec = WorkerSpec(**{**spec.__dict__, "port": bound})
    context = multiprocessing.get_context("spawn")
    board = WorkerBoard.create(context, spec.workers)
    processes: list[BaseProcess] = [
        context.Process(
            target=worker_main, args=(spec, i, board.array), name=f"looplab-serve-worker-{i}"
        )
        for i in range(spec.workers)
    ]
    deaths: list[str] = []

    def died(index: int, process: BaseProcess) -> None:
        board.set(index, alive=0, exitcode=process.exitcode or 0)
        deaths.append(f"worker {index} (pid {process.pid}) {death_reason(process.exitcode)}")
        left = spec.workers - len(deaths)
        report(f"looplab serve: {deaths[-1]}; serving on {left} of {spec.workers} workers")

    try:
        for process in processes:
            process.start()
        _wait_ready(processes, board)
        announce(bound)
        if port_file is not None:
            port_file.write_text(str(bound))
        supervise(processes, grace_s=spec.drain_s + 5, on_death=died)
    finally:
        stop_all(processes, spec.drain_s + 5)
        reserve.close()
    if deaths:
        report(f"looplab serve: stopped; {len(deaths)} worker(s) had died: {'; '.join(deaths)}")
    return 1 if deaths else 0


def _wait_ready(processes: list[BaseProcess], board: WorkerBoard) -> None:
    """Return once every worker serves; raise naming the first that died or hung."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while not all(board.row(i)["ready"] for i in range(len(processes))):
        for index, process in enumerate(processes):
            if not process.is_alive():
                raise BackendError(
                    f"serve worker {index} exited before serving: {death_reason(process.exitcode)}"
                )
        if time.monotonic() > deadline:
            raise BackendError(f"serve workers did not start within {START_TIMEOUT_S:g} s")
        time.sleep(0.02)


def worker_main(spec: WorkerSpec, index: int, array: Any) -> None:
    """One worker process: the simulator on the shared port and a private one, its row
    of the board kept current; returns when uvicorn has drained (SIGTERM)."""
    die_with_parent(spec.parent_pid)
    if spec.log_setup is not None:
        spec.log_setup()
    board = WorkerBoard(array, spec.workers)
    simulator = Simulator(spec.profile, pacer=spec.pacer)
    public = reuseport_socket(spec.host, spec.port)
    public.listen(BACKLOG)
    private = listening_socket(_loopback(spec.host))
    private.bind((_loopback(spec.host), 0))
    private.listen(64)
    app = create_app(simulator)
    _add_worker_routes(app, simulator, board, index, _loopback(spec.host))
    server = uvicorn.Server(app_config(app, host=spec.host, port=spec.port, drain_s=spec.drain_s))
    board.set(
        index,
        pid=os.getpid(),
        private_port=private.getsockname()[1],
        alive=1,
        published=time.monotonic(),
    )
    threading.Thread(
        target=_publish, args=(server, simulator, board, index), daemon=True, name="board"
    ).start()
    try:
        run_server(server, [public, private])
    finally:
        public.close()
        private.close()


def _publish(server: uvicorn.Server, simulator: Simulator, board: WorkerBoard, index: int) -> None:
    """Keep row `index` current every `PUBLISH_S`; mark it ready once uvicorn serves."""
    while True:
        board.publish(index, simulator.health())
        if server.started:
            board.set(index, ready=1)
        time.sleep(PUBLISH_S)


def _loopback(host: str) -> str:
    return "::1" if ":" in host else "127.0.0.1"


def _add_worker_routes(
    app: Starlette, simulator: Simulator, board: WorkerBoard, index: int, loopback: str
) -> None:
    """Put the board's `/health` and the forwarding timing lookup ahead of the app's own."""
    timing_path = "/v1/looplab/requests/{request_id}/timing"
    local_timing = next(r for r in app.routes if getattr(r, "path", "") == timing_path)
    local: Callable[[Request], Any] = local_timing.endpoint  # type: ignore[attr-defined]
    netloc = f"[{loopback}]" if ":" in loopback else loopback

    async def health(request: Request) -> Response:
        mine = simulator.health()
        board.publish(index, mine)
        return JSONResponse(board.totals(mine))

    async def timing(request: Request) -> Response:
        request_id = request.path_params["request_id"]
        if request_id in simulator.timings or request.headers.get(LOCAL_HEADER):
            return await local(request)  # type: ignore[no-any-return]
        path = timing_path.replace("{request_id}", quote(request_id, safe=""))
        async with httpx2.AsyncClient(timeout=5) as client:
            for port in board.private_ports(but=index):
                try:
                    answer = await client.get(
                        f"http://{netloc}:{port}{path}",
                        headers={LOCAL_HEADER: "1"},
                    )
                except httpx2.HTTPError:
                    continue  # that worker is stopping: the others may still have it
                if answer.status_code == 200:
                    return JSONResponse(answer.json())
        return await local(request)  # type: ignore[no-any-return]

    app.router.routes[0:0] = [
        Route("/health", health, methods=["GET"]),
        Route(timing_path, timing, methods=["GET"]),
    ]
