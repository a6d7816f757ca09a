"""A load generator in its own worker processes (`looplab bench backend`, `bench proxy`).

At 64 streams x 750 tok/s a client in the benchmark's own process burns most of a core
parsing chunks, and its event loop's stalls show up as server TTFT error. So the streams
run in worker processes (`spawn`ed, one per core by default), each an asyncio loop with
its share of the streams, through one of three clients (`LoadSpec.client`): the
instrumented `openai`-compatible client (`looplab.backends.client.client.InstrumentedClient`),
the stock `openai` client, or raw HTTP on a socket (the server's floor).

Schedule: stream `i` of `concurrency` starts at `t0 + i x stagger_s / concurrency` (one
stream's duration as the stagger keeps `concurrency` streams in flight, not one burst)
and sends `rounds` requests back to back. `t0` is an absolute `time.perf_counter()` time:
every process reads the same CLOCK_MONOTONIC, so workers start together and their times
compare with the server's. Each worker first opens one connection per stream (a 1-token
request), so cells measure steady-state streaming, not TCP set-up.

`run_load` returns one `ModelResponse` per request (times on the shared clock, without
server timing: fetch that afterwards, off the measured path) and the workers' CPU time.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx2

from looplab.backends.client.client import (
    CallTiming,
    EndpointConfig,
    InstrumentedClient,
    ModelResponse,
)
from looplab.bench.failures import failure_reason
from looplab.bench.raw_load import raw_streams
from looplab.bench.stock_load import bench_prompt, stock_streams
from looplab.errors import BackendError, LooplabError

__all__ = [
    "CLIENTS",
    "FLOOR_CLIENT",
    "LoadGenerator",
    "LoadResult",
    "LoadSpec",
    "ServerProcess",
    "attach_server_timing",
    "start_delay_s",
]

WARM_UP_MAX_S = 10.0
"""Longest wait for the warm-up connections before a cell starts (plus 1 s)."""
CLIENTS = ("looplab", "stock", "raw")
"""Clients the load generator can send with (`LoadSpec.client`)."""
FLOOR_CLIENT = "raw"
"""The client whose TTFT error is the server's to answer for: it does no per-request work
of its own, so what it sees is the server's request path, release lateness and write,
plus loopback (`looplab.bench.raw_load`). The benches hold the TTFT target against
it and print the other clients' excess over it as their own overhead."""
_CLIENT_STREAMS = {"stock": stock_streams, "raw": raw_streams}
"""The clients other than the instrumented one, by name (same signature)."""


@dataclass(frozen=True)
class LoadSpec:
    """One cell's load: where, how many streams, how many requests each, what to ask."""

    base_url: str
    concurrency: int
    rounds: int = 1
    stagger_s: float = 0.0
    """Spread of the streams' first requests (one stream's expected duration)."""
    model: str = "looplab-lorem"
    prompt_words: int = 0
    """Extra words per prompt (longer contexts)."""
    tag: str = "bench"
    client: str = "looplab"
    """Which client sends the load (`CLIENTS`): `looplab` (the instrumented client),
    `stock` (`openai.AsyncOpenAI` as a user runs it, `looplab.bench.stock_load`) or
    `raw` (HTTP/1.1 on a socket, no per-request client work: `looplab.bench.raw_load`)."""
    max_tokens: int | None = None
    """`max_tokens` of every request (None: not sent)."""
    workers: int | None = None
    """At most this many worker processes (1: a single-process client)."""


@dataclass
class LoadResult:
    """Every request's measurements and the load generator's CPU seconds."""

    responses: list[ModelResponse] = field(default_factory=list)
    client_cpu_s: float = 0.0
    wall_s: float = 0.0


class LoadGenerator:
    """A pool of worker processes that generate load (see the module docstring).

    Use as a context manager; the processes are started once and reused across cells.

    Args:
        workers: worker processes (default: the machine's cores, at most 4).
    """

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or max(1, min(4, os.cpu_count() or 1))
        self._pool: ProcessPoolExecutor | None = None
        self.pids: set[int] = set()
        """The worker processes' ids."""

    def __enter__(self) -> LoadGenerator:
        context = multiprocessing.get_context("spawn")
        self._pool = ProcessPoolExecutor(self.workers, mp_context=context)
        self.pids = set(self._pool.map(_ready, range(self.workers)))  # start them all now
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def run(self, spec: LoadSpec) -> LoadResult:
        """Run one cell's load across the workers; returns when every request is done."""
        assert self._pool is not None, "use LoadGenerator as a context manager"
        workers = min(self.workers, spec.concurrency, spec.workers or self.workers)
        # warm-up (one connection per stream) is done before t0 inside each worker
        t0 = time.perf_counter() + start_delay_s(spec.concurrency)
        futures = [
            self._pool.submit(_worker, spec, list(range(w, spec.concurrency, workers)), t0)
            for w in range(workers)
        ]
        result = LoadResult()
        for future in futures:
            try:
                rows, cpu = future.result()
            except LooplabError:
                raise
            except Exception as exc:  # a worker's failure, named (never an empty reason)
                raise BackendError(f"bench {spec.client} client: {failure_reason(exc)}") from None
            result.client_cpu_s += cpu
            result.responses.extend(_response(row) for row in rows)
        result.wall_s = time.perf_counter() - t0
        return result


def start_delay_s(concurrency: int) -> float:
    """Seconds from a cell's launch to its first request: time to open and warm one
    connection per stream, at most 1 s + `WARM_UP_MAX_S`. A server closes a connection idle
    for `READ_TIMEOUT_S` (15 s, `looplab.serving.guard`); an uncapped 1 + 0.02 s x streams
    (21.5 s at 1,024) had every warmed connection closed before its first request."""
    return 1.0 + min(0.02 * concurrency, WARM_UP_MAX_S)


class ServerProcess:
    """A looplab server command (`serve`, `proxy`) in a child process on a free loopback
    port: `python -m looplab ARGS --port 0 --port-file F`; `base_url` once it answers."""

    def __init__(self, args: Sequence[str]) -> None:
        self.args = [sys.executable, "-m", "looplab", "--no-log-file", *args]
        self.process: subprocess.Popen[bytes] | None = None
        self.base_url = ""
        self.ready_s = 0.0
        """Seconds from the process's launch to its first answer on `/health`."""

    def __enter__(self) -> Self:
        with tempfile.NamedTemporaryFile(prefix="looplab-port-", delete=False) as handle:
            port_file = Path(handle.name)
        args = [*self.args, "--port", "0", "--port-file", str(port_file)]
        launched = time.perf_counter()
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.perf_counter() + 30
            port = ""
            while time.perf_counter() < deadline and not port:
                if self.process.poll() is not None:
                    err = self.process.stderr.read().decode() if self.process.stderr else ""
                    raise BackendError(f"bench server exited early: {err.strip()[-400:]}")
                time.sleep(0.05)
                port = port_file.read_text().strip()
        except BaseException:
            self.__exit__()
            raise
        finally:
            port_file.unlink(missing_ok=True)
        if not port:
            self.__exit__()
            raise BackendError("bench server did not report its port within 30 s")
        self.base_url = f"http://127.0.0.1:{port}/v1"
        try:  # a server that never answers is stopped, not left running
            httpx2.get(self.base_url.removesuffix("/v1") + "/health", timeout=10).raise_for_status()
        except BaseException:
            self.__exit__()
            raise
        self.ready_s = time.perf_counter() - launched
        return self

    def cpu_s(self) -> float:
        """User + system CPU seconds the server process and its live child processes
        (`serve --workers`) have used so far."""
        assert self.process is not None
        return sum(_cpu_of(pid) for pid in _process_tree(self.process.pid))

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            if self.process.stderr is not None:
                self.process.stderr.close()


def _process_tree(pid: int) -> list[int]:
    """`pid` and its descendants (Linux `/proc/PID/task/PID/children`)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return [pid]
    return [pid, *(p for child in children for p in _process_tree(int(child)))]


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of process `pid` (0 once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def attach_server_timing(base_url: str, responses: list[ModelResponse]) -> None:
    """Fetch each response's record from the server's timing endpoint (simulator or
    proxy: `/v1/looplab/requests/{id}/timing`) into `response.server_timing`."""
    with httpx2.Client(base_url=base_url, timeout=30) as http:
        for response in responses:
            if response.looplab_request_id:
                answer = http.get(f"/looplab/requests/{response.looplab_request_id}/timing")
                if answer.status_code == 200:
                    response.server_timing = answer.json()


def _ready(_: int) -> int:
    time.sleep(0.05)  # hold this worker so the next task starts another one
    return os.getpid()


def _worker(spec: LoadSpec, streams: list[int], t0: float) -> tuple[list[dict[str, Any]], float]:
    """Worker process body: run `streams` of `spec` from `t0`; plain rows back."""
    return asyncio.run(_streams(spec, streams, t0))


async def _streams(
    spec: LoadSpec, streams: list[int], t0: float
) -> tuple[list[dict[str, Any]], float]:
    starts = {i: t0 + i * spec.stagger_s / spec.concurrency for i in streams}
    cpu0 = _cpu_s()  # includes the warm-up requests: every client alike
    if spec.client == "looplab":
        rows = await _instrumented_streams(spec, streams, starts)
    else:
        rows = await _CLIENT_STREAMS[spec.client](
            spec.base_url,
            spec.model,
            starts,
            rounds=spec.rounds,
            tag=spec.tag,
            prompt_words=spec.prompt_words,
            max_tokens=spec.max_tokens,
        )
    return rows, _cpu_s() - cpu0


async def _instrumented_streams(
    spec: LoadSpec, streams: list[int], starts: dict[int, float]
) -> list[dict[str, Any]]:
    endpoint = EndpointConfig(base_url=spec.base_url, model=spec.model)
    size = len(streams) + 4
    limits = httpx2.Limits(max_connections=size, max_keepalive_connections=size)
    params: dict[str, Any] = {}
    if spec.max_tokens is not None:
        params["max_tokens"] = spec.max_tokens
    rows: list[dict[str, Any]] = []
    async with (
        httpx2.AsyncClient(limits=limits, timeout=600) as http,
        InstrumentedClient(endpoint, http_client=http) as client,
    ):
        await asyncio.gather(
            *(
                client.complete([{"role": "user", "content": f"warm {i}"}], max_completion_tokens=1)
                for i in streams
            )
        )

        async def stream(index: int) -> None:
            await asyncio.sleep(max(0.0, starts[index] - time.perf_counter()))
            for turn in range(spec.rounds):
                text = bench_prompt(f"{spec.tag} {index}-{turn}", spec.prompt_words)
                response = await client.complete([{"role": "user", "content": text}], **params)
                rows.append(_row(response))

        await asyncio.gather(*(stream(i) for i in streams))
    return rows


def _row(response: ModelResponse) -> dict[str, Any]:
    timing = response.timing
    return {
        "scheduled": timing.scheduled,
        "sent": timing.sent,
        "first_token": timing.first_token,
        "last_token": timing.last_token,
        "end": timing.end,
        "chunk_times": timing.chunk_times,
        "finish_reason": response.finish_reason,
        "prompt_tokens": response.prompt_tokens,
        "completion_tokens": response.completion_tokens,
        "reasoning_tokens": response.reasoning_tokens,
        "visible_chunks": response.visible_chunks,
        "request_id": response.request_id,
        "looplab_id": response.looplab_request_id,
    }


def _response(row: dict[str, Any]) -> ModelResponse:
    timing = CallTiming(
        scheduled=row["scheduled"],
        sent=row["sent"],
        first_token=row["first_token"],
        last_token=row["last_token"],
        end=row["end"],
        chunk_times=row["chunk_times"],
    )
    response = ModelResponse(
        message={},
        timing=timing,
        finish_reason=row["finish_reason"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        reasoning_tokens=row["reasoning_tokens"],
        visible_chunks=row["visible_chunks"],
        request_id=row["request_id"],
    )
    response.looplab_request_id = row["looplab_id"]
    return response


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
