"""`looplab bench backend`: pacing fidelity of the simulator, measured from the client side.

For each pacer (`schedule`, the simulator's, and `naive`, per-token `asyncio.sleep`, the
baseline), each target rate and each concurrency level, a fresh `looplab serve` process
is started and loaded through the real `openai` client over loopback HTTP. Per stream:

- achieved decode rate = (streamed tokens - 1) / (last token - first token), client side;
- TTFT error = client-measured TTFT - the TTFT the server intended for that request,
  split into request transit (client hand-off -> server has the body), the server's
  first-release lateness, and delivery (server release -> client has parsed the chunk);
- chunk gap = time between consecutive token-carrying chunks at the client;
- CPU seconds per 1k tokens = (server process + client process CPU) / tokens * 1000.

Each of the `concurrency` workers sends its requests back to back; their first requests
are staggered over one stream's duration, so the server sees a steady `concurrency`
streams in flight (as vLLM's `--max-concurrency` does after its ramp), not one burst.
The server runs in its own process, so server and client compete for the 2 cores as a
real deployment on one machine would, but not for one event loop.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx2

from looplab.backends.client import EndpointConfig, InstrumentedClient, ModelResponse
from looplab.backends.tokens import Tokenizer, default_tokenizer
from looplab.errors import BackendError
from looplab.stats import quantile

__all__ = ["BackendBenchCell", "prepare_cost", "run_backend_bench", "tokenizer_agreement"]


@dataclass
class BackendBenchCell:
    """One (pacer, rate, concurrency) measurement; times in ms, errors in %."""

    pacer: str
    target_tps: float
    concurrency: int
    streams: int
    tokens_per_stream: int
    rate_error_pct_p50: float
    rate_error_pct_worst: float
    ttft_error_ms_p50: float
    ttft_error_ms_p99: float
    request_transit_ms_p50: float
    first_release_late_ms_p50: float
    delivery_ms_p50: float
    chunk_gap_ms_p50: float
    chunk_gap_ms_p99: float
    server_cpu_s_per_1k_tokens: float
    client_cpu_s_per_1k_tokens: float
    wall_s: float

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


def run_backend_bench(
    *,
    rates: Sequence[float] = (80.0, 750.0),
    concurrencies: Sequence[int] = (1, 16, 64),
    pacers: Sequence[str] = ("schedule", "naive"),
    tokens: int = 500,
    ttft_s: float = 0.05,
    min_streams: int = 8,
    progress: Callable[[str], None] | None = None,
) -> list[BackendBenchCell]:
    """Run the whole grid; returns one cell per (rate, concurrency, pacer).

    Args:
        rates: target decode rates (tok/s).
        concurrencies: simultaneous streams per round.
        pacers: which pacers to compare.
        tokens: visible output tokens per stream.
        ttft_s: the profile's base TTFT.
        min_streams: rounds are repeated until at least this many streams were measured.
        progress: called with a short line before each cell.

    Raises:
        BackendError: when a server does not start or a request fails.
    """
    cells: list[BackendBenchCell] = []
    for rate in rates:
        for pacer in pacers:
            with _ServerProcess(rate, pacer, tokens, ttft_s) as server:
                for concurrency in concurrencies:
                    if progress:
                        progress(f"{pacer:>8} pacer, {rate:g} tok/s, {concurrency} streams")
                    rounds = max(1, -(-min_streams // concurrency))
                    cells.append(
                        asyncio.run(
                            _measure(server, pacer, rate, concurrency, rounds, tokens, ttft_s)
                        )
                    )
    return cells


class _ServerProcess:
    """`looplab serve` in a child process on a free loopback port."""

    def __init__(self, rate: float, pacer: str, tokens: int, ttft_s: float) -> None:
        self.args = [
            sys.executable, "-m", "looplab", "serve",
            "--profile", "fast-750", "--pacer", pacer, "--port", "0", "--port-file", "",
            "-s", f"decode_tps={rate}", "-s", f"ttft_s={ttft_s}", "-s", "prefill_tps=null",
            "-s", f"output_tokens={tokens}", "-s", "reasoning_tokens=0", "-s", "prefix_cache=false",
        ]  # fmt: skip
        self.process: subprocess.Popen[bytes] | None = None
        self.base_url = ""

    def __enter__(self) -> _ServerProcess:
        import tempfile

        with tempfile.NamedTemporaryFile(prefix="looplab-port-", delete=False) as handle:
            port_file = handle.name
        self.args[self.args.index("--port-file") + 1] = port_file
        self.process = subprocess.Popen(
            self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.perf_counter() + 30
        port = ""
        while time.perf_counter() < deadline and not port:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise BackendError(f"bench server exited early: {err.strip()[-400:]}")
            time.sleep(0.05)
            port = open(port_file).read().strip()
        os.unlink(port_file)
        if not port:
            raise BackendError("bench server did not report its port within 30 s")
        self.base_url = f"http://127.0.0.1:{port}/v1"
        httpx2.get(self.base_url.removesuffix("/v1") + "/health", timeout=10).raise_for_status()
        return self

    def cpu_s(self) -> float:
        """User + system CPU seconds the server process has used so far."""
        assert self.process is not None
        fields = open(f"/proc/{self.process.pid}/stat").read().rsplit(")", 1)[1].split()  # noqa: SIM115
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


async def _measure(
    server: _ServerProcess,
    pacer: str,
    rate: float,
    concurrency: int,
    rounds: int,
    tokens: int,
    ttft_s: float,
) -> BackendBenchCell:
    endpoint = EndpointConfig(
        base_url=server.base_url, model="looplab-lorem", fetch_server_timing=True
    )
    limits = httpx2.Limits(
        max_connections=concurrency + 8, max_keepalive_connections=concurrency + 8
    )
    async with (
        httpx2.AsyncClient(limits=limits, timeout=600) as http,
        InstrumentedClient(endpoint, http_client=http) as client,
    ):
        # Open one connection per stream first: the cell measures steady-state streaming,
        # not TCP and first-use set-up (~10 ms on a new connection here).
        await asyncio.gather(
            *(
                client.complete([{"role": "user", "content": f"warm {i}"}], max_completion_tokens=1)
                for i in range(concurrency)
            )
        )
        server_cpu0 = server.cpu_s()
        client_cpu0 = _own_cpu_s()
        started = time.perf_counter()
        per_worker = rounds
        stream_s = ttft_s + tokens / rate
        results: list[ModelResponse] = []

        async def worker(index: int) -> None:
            # Stagger the first requests over one stream's duration: a steady state of
            # `concurrency` streams in flight, not a thundering herd of simultaneous sends.
            await asyncio.sleep(index * stream_s / concurrency)
            for turn in range(per_worker):
                messages = [{"role": "user", "content": f"bench {index}-{turn}"}]
                results.append(await client.complete(messages))

        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        wall = time.perf_counter() - started
        server_cpu = server.cpu_s() - server_cpu0
        client_cpu = _own_cpu_s() - client_cpu0
    rate_errors: list[float] = []
    ttft_errors: list[float] = []
    transits: list[float] = []
    release_lates: list[float] = []
    deliveries: list[float] = []
    gaps: list[float] = []
    total_tokens = 0
    for result in results:
        achieved = result.decode_rate_tps
        if achieved is None or result.server_timing is None or result.timing.ttft_s is None:
            raise BackendError(f"bench stream returned no timing: {result.finish_reason}")
        rate_errors.append((achieved / rate - 1) * 100)
        record = result.server_timing
        ttft_errors.append((result.timing.ttft_s - record["intended_first_s"]) * 1000)
        # Both processes read CLOCK_MONOTONIC through perf_counter, so times compare directly.
        received = record["received_clock_s"]
        first_release = received + record["releases"][0][3]
        transits.append((received - result.timing.sent) * 1000)
        release_lates.append(record["first_release_late_s"] * 1000)
        deliveries.append(((result.timing.first_token or 0) - first_release) * 1000)
        gaps.extend(g * 1000 for g in result.timing.chunk_gaps_s())
        total_tokens += result.completion_tokens or 0
    per_1k = 1000 / max(1, total_tokens)
    return BackendBenchCell(
        pacer=pacer,
        target_tps=rate,
        concurrency=concurrency,
        streams=len(results),
        tokens_per_stream=tokens,
        rate_error_pct_p50=statistics.median(rate_errors),
        rate_error_pct_worst=max(rate_errors, key=abs),
        ttft_error_ms_p50=statistics.median(ttft_errors),
        ttft_error_ms_p99=quantile(ttft_errors, 0.99),
        request_transit_ms_p50=statistics.median(transits),
        first_release_late_ms_p50=statistics.median(release_lates),
        delivery_ms_p50=statistics.median(deliveries),
        chunk_gap_ms_p50=statistics.median(gaps) if gaps else 0.0,
        chunk_gap_ms_p99=quantile(gaps, 0.99) if gaps else 0.0,
        server_cpu_s_per_1k_tokens=server_cpu * per_1k,
        client_cpu_s_per_1k_tokens=client_cpu * per_1k,
        wall_s=wall,
    )


def prepare_cost(steps: int = 60) -> tuple[int, float, float]:
    """Server-side cost of accepting one request of a growing agent conversation.

    Each step appends a ~2k-token tool result and a short reply, as an agent does; the
    simulator validates, counts and hashes the whole conversation on its event loop, so
    this is time other streams' pacing waits.

    Returns:
        (prompt tokens at the last step, last step's ms, median ms over the steps).
    """
    import json as _json

    from looplab.backends.presets import resolve_profile
    from looplab.backends.simulator import Simulator
    from looplab.clock import VirtualClock

    simulator = Simulator(resolve_profile("fast-750", ["output_tokens=50"]), clock=VirtualClock())
    messages: list[dict[str, str]] = [
        {"role": "system", "content": "You are a coding agent. " * 200}
    ]
    costs: list[float] = []
    prompt = 0
    for step in range(steps):
        messages.append({"role": "user", "content": f"tool output line {step} " * 400})
        body = _json.dumps({"model": "looplab-lorem", "messages": messages}).encode()
        started = time.perf_counter()
        prompt = simulator.prepare(body).prompt_tokens
        costs.append((time.perf_counter() - started) * 1000)
        messages.append({"role": "assistant", "content": "ok " * 100})
    return prompt, costs[-1], statistics.median(costs)


def tokenizer_agreement(root: Path) -> list[tuple[str, int, int, int]]:
    """The approximate tokenizer against o200k on the project's own files.

    Returns:
        Per corpus (task code, task docs pages, READMEs): (name, files, o200k tokens,
        approximate tokens). Empty when no exact encoding loads here.
    """
    exact = default_tokenizer()
    if not exact.exact:
        return []
    approx = Tokenizer("approx-words-4c", None, None)
    rows = []
    for name, pattern in (
        ("task code", "tasks/**/*.py"),
        ("task docs", "tasks/**/*.html"),
        ("READMEs", "**/README.md"),
    ):
        files = [p for p in sorted(root.glob(pattern)) if ".venv" not in p.parts]
        text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in files)
        rows.append((name, len(files), exact.count(text), approx.count(text)))
    return rows


def _own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
