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

Each of the `concurrency` streams sends its requests back to back; their first requests
are staggered over one stream's duration, so the server sees a steady `concurrency`
streams in flight (as vLLM's `--max-concurrency` does after its ramp), not one burst.
The server runs in its own process and the load generator in its own worker processes
(`looplab.bench.loadgen`), so they compete for the 2 cores as a real deployment on
one machine would, but never for one event loop; the server's own release lateness
(p50/p99) is printed beside the client-measured TTFT error, so a stall is attributed to
the side that caused it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from looplab.backends.client.client import ModelResponse
from looplab.backends.simulator.record import read_served_timing
from looplab.bench.costs import prepare_cost, tokenizer_agreement
from looplab.bench.loadgen import (
    LoadGenerator,
    LoadSpec,
    ServerProcess,
    attach_server_timing,
)
from looplab.errors import BackendError
from looplab.stats.order import quantile

__all__ = [
    "SERVING_MODELS",
    "BackendBenchCell",
    "bench_profile_args",
    "client_variants",
    "prepare_cost",
    "run_backend_bench",
    "run_serving_bench",
    "tokenizer_agreement",
]


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
    intended_tps_p50: float = 0.0
    """Median intended mean rate of the streams (the target under a flat profile)."""
    replans_p50: float = 0.0
    """Median re-plans per stream (streams joining or leaving a load-dependent server)."""
    lateness_ms_p99: float = 0.0
    """p99 over streams of the server's per-token lateness p99."""
    lateness_ms_p50: float = 0.0
    """Median over streams of the server's per-token release lateness p50."""
    model: str = "flat"
    """Serving model of the cell (`SERVING_MODELS`)."""
    client: str = "looplab"
    """The client that measured the cell (`looplab.bench.loadgen.CLIENTS`)."""
    client_processes: int = 0
    """Load-generator processes the client ran in (0: one per core, up to 4)."""
    rate_unmeasured: int = 0
    """Streams whose client read every token at once (a CPU-bound client): no rate seen,
    left out of the rate errors."""

    @property
    def client_label(self) -> str:
        """`looplab`, `stock`, or `stock, 1 process`."""
        return self.client + (", 1 process" if self.client_processes == 1 else "")

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
    workers: int = 1,
    clients: Sequence[str] | None = None,
    rounds: int | None = None,
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
        workers: the server's processes (`serve --workers`).
        clients: only these clients (None: `client_variants`'s).
        rounds: requests per stream (None: enough for `min_streams`).

    Raises:
        BackendError: when a server does not start or a request fails.
    """
    cells: list[BackendBenchCell] = []
    top = max(concurrencies)
    with LoadGenerator() as load:
        for rate in rates:
            for pacer in pacers:
                with _ServerProcess(rate, pacer, tokens, ttft_s, workers=workers) as server:
                    for concurrency in concurrencies:
                        repeats = rounds or max(1, -(-min_streams // concurrency))
                        for client, processes in client_variants(pacer, concurrency, top):
                            if clients is not None and client not in clients:
                                continue
                            if progress:
                                progress(
                                    f"{pacer:>8} pacer, {rate:g} tok/s, {concurrency} streams, "
                                    f"{client} client"
                                )
                            cell = _measure(
                                server,
                                load,
                                LoadSpec(
                                    base_url=server.base_url,
                                    concurrency=concurrency,
                                    rounds=repeats,
                                    stagger_s=ttft_s + tokens / rate,
                                    client=client,
                                    workers=processes or None,
                                    max_tokens=tokens + MAX_TOKENS_SLACK,
                                ),
                                pacer,
                                rate,
                                tokens,
                            )
                            cell.client_processes = processes
                            cells.append(cell)
    return cells


MAX_TOKENS_SLACK = 100
"""`max_tokens` is sent as the reply's length plus this (the issue's request shape: a
`max_tokens` that does not cut the reply)."""


def client_variants(pacer: str, concurrency: int, top: int) -> list[tuple[str, int]]:
    """Which clients measure a cell: (client, processes; 0 = the load generator's default).

    The schedule pacer through all three clients (`raw` shows the server's floor, so the
    gap to the other two is their own per-request work); at the top concurrency, also the
    stock client in one process, beside the multi-process generator, so an error that
    only the single-process client sees is the client's, not the server's. The naive
    baseline through the instrumented client only.
    """
    if pacer != "schedule":
        return [("looplab", 0)]
    variants = [("raw", 0), ("looplab", 0), ("stock", 0)]
    if concurrency == top and concurrency > 1:
        variants.append(("stock", 1))
    return variants


SERVING_MODELS: dict[str, tuple[str, list[str], int]] = {
    "flat": ("750 tok/s, no slowdown", [], 0),
    "context": (
        "decode 2x slower at the end of each reply than at its start (context slope)",
        ["decode_context_slowdown=200"],
        0,
    ),
    "batch": (
        "+5% per concurrent stream: streams join and leave mid-reply (re-plans)",
        ["batch_slowdown=0.05"],
        0,
    ),
    "ceiling": (
        "server throughput ceiling 6,000 tok/s: 16 streams get ~375 tok/s each",
        ["server_max_tps=6000"],
        0,
    ),
    "prefill": (
        "prefill 20k tok/s + 50x per 100K positions, ~2K-token prompts (TTFT curve)",
        ["prefill_tps=20000", "prefill_context_slowdown=50"],
        2000,
    ),
    "gpu-frontier": (
        "gpu-frontier-batched-68's curves at 750 tok/s (context 0.56, batch 2%, ceiling)",
        [
            "decode_context_slowdown=0.56",
            "batch_slowdown=0.02",
            "server_max_tps=2500",
            "prefill_tps=8000",
            "prefill_context_slowdown=1.0",
        ],
        2000,
    ),
}
"""Serving models measured by `run_serving_bench`: name -> (what, profile overrides,
prompt words per request)."""


def run_serving_bench(
    *,
    rate: float = 750.0,
    concurrency: int = 16,
    tokens: int = 500,
    ttft_s: float = 0.05,
    min_streams: int = 16,
    models: Sequence[str] = tuple(SERVING_MODELS),
    progress: Callable[[str], None] | None = None,
) -> list[BackendBenchCell]:
    """One cell per serving model: the schedule pacer against each stream's own intended
    (possibly re-planned) schedule, with `concurrency` staggered streams.

    Raises:
        BackendError: when a server does not start or a request fails.
    """
    cells: list[BackendBenchCell] = []
    with LoadGenerator() as load:
        for name in models:
            _, overrides, prompt_words = SERVING_MODELS[name]
            if progress:
                progress(f"serving model {name}, {rate:g} tok/s, {concurrency} streams")
            with _ServerProcess(rate, "schedule", tokens, ttft_s, overrides) as server:
                spec = LoadSpec(
                    base_url=server.base_url,
                    concurrency=concurrency,
                    rounds=max(1, -(-min_streams // concurrency)),
                    stagger_s=ttft_s + tokens / rate,
                    prompt_words=prompt_words,
                    max_tokens=tokens + MAX_TOKENS_SLACK,
                )
                cell = _measure(server, load, spec, "schedule", rate, tokens)
            cell.model = name
            cells.append(cell)
    return cells


class _ServerProcess(ServerProcess):
    """`looplab serve` at a bench profile in a child process on a free loopback port."""

    def __init__(
        self,
        rate: float,
        pacer: str,
        tokens: int,
        ttft_s: float,
        extra: Sequence[str] = (),
        workers: int = 1,
    ) -> None:
        args = ["--pacer", pacer, "--workers", str(workers)]
        super().__init__(["serve", *args, *bench_profile_args(rate, tokens, ttft_s, extra)])


def bench_profile_args(
    rate: float, tokens: int, ttft_s: float, extra: Sequence[str] = ()
) -> list[str]:
    """The bench profile as CLI flags: fast-750 at `rate`, fixed TTFT, free prefill,
    `tokens` per reply, no reasoning or cache (plus `extra` overrides)."""
    fields = [
        f"decode_tps={rate}",
        f"ttft_s={ttft_s}",
        "prefill_tps=null",
        f"output_tokens={tokens}",
        "reasoning_tokens=0",
        "prefix_cache=false",
        *extra,
    ]
    args = ["--profile", "fast-750"]
    for setting in fields:
        args += ["--profile-set", setting]
    return args


def _measure(
    server: _ServerProcess,
    load: LoadGenerator,
    spec: LoadSpec,
    pacer: str,
    rate: float,
    tokens: int,
) -> BackendBenchCell:
    """Load `server` as `spec` says and measure the cell."""
    server_cpu0 = server.cpu_s()
    measured = load.run(spec)
    server_cpu = server.cpu_s() - server_cpu0
    results, client_cpu, wall = measured.responses, measured.client_cpu_s, measured.wall_s
    attach_server_timing(server.base_url, results)
    samples = _Samples()
    for result in results:
        samples.add(result)
    per_1k = 1000 / max(1, samples.total_tokens)
    return BackendBenchCell(
        pacer=pacer,
        target_tps=rate,
        concurrency=spec.concurrency,
        streams=len(results),
        tokens_per_stream=tokens,
        rate_error_pct_p50=statistics.median(samples.rate_errors or [math.nan]),
        rate_error_pct_worst=max(samples.rate_errors or [math.nan], key=abs),
        rate_unmeasured=samples.rate_unmeasured,
        ttft_error_ms_p50=statistics.median(samples.ttft_errors),
        ttft_error_ms_p99=quantile(samples.ttft_errors, 0.99),
        request_transit_ms_p50=statistics.median(samples.transits),
        first_release_late_ms_p50=statistics.median(samples.release_lates),
        delivery_ms_p50=statistics.median(samples.deliveries),
        chunk_gap_ms_p50=statistics.median(samples.gaps) if samples.gaps else 0.0,
        chunk_gap_ms_p99=quantile(samples.gaps, 0.99) if samples.gaps else 0.0,
        server_cpu_s_per_1k_tokens=server_cpu * per_1k,
        client_cpu_s_per_1k_tokens=client_cpu * per_1k,
        wall_s=wall,
        client=spec.client,
        intended_tps_p50=statistics.median(samples.intended),
        replans_p50=statistics.median(samples.replans),
        lateness_ms_p99=quantile(samples.late99, 0.99) * 1000,
        lateness_ms_p50=statistics.median(samples.late50) * 1000,
    )


@dataclass
class _Samples:
    """Per-stream measures of one bench cell, against each request's intended schedule."""

    rate_errors: list[float] = field(default_factory=list)
    ttft_errors: list[float] = field(default_factory=list)
    transits: list[float] = field(default_factory=list)
    release_lates: list[float] = field(default_factory=list)
    deliveries: list[float] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)
    replans: list[float] = field(default_factory=list)
    intended: list[float] = field(default_factory=list)
    late50: list[float] = field(default_factory=list)
    late99: list[float] = field(default_factory=list)
    total_tokens: int = 0
    rate_unmeasured: int = 0

    def add(self, result: ModelResponse) -> None:
        """Add one stream's client-side timing and the server's record of it.

        Raises:
            BackendError: the stream came back without timing.
        """
        achieved, ttft = result.decode_rate_tps, result.timing.ttft_s
        if result.server_timing is None or ttft is None:
            raise BackendError(f"bench stream returned no timing: {result.finish_reason}")
        record = read_served_timing(result.server_timing)
        rate, first = record.get("intended_rate_tps"), record.get("intended_first_s")
        releases, late = record.get("releases"), record.get("first_release_late_s")
        if rate is None or first is None or not releases or late is None:
            raise BackendError(f"bench stream was not paced: {record['outcome']}")
        # against the request's own intended schedule (its mean rate over the visible
        # tokens), which is the target rate itself under a flat profile
        self.intended.append(rate)
        if achieved is None:  # a CPU-bound client read the whole reply at once
            self.rate_unmeasured += 1
        else:
            self.rate_errors.append((achieved / rate - 1) * 100)
        self.replans.append(float(record.get("replans", 0)))
        self.ttft_errors.append((ttft - first) * 1000)
        self.late50.append(record.get("lateness_p50_s") or 0.0)
        self.late99.append(record.get("lateness_p99_s") or 0.0)
        # Both processes read CLOCK_MONOTONIC through perf_counter, so times compare directly.
        received = record["received_clock_s"]
        first_release = received + releases[0][3]
        self.transits.append((received - result.timing.sent) * 1000)
        self.release_lates.append(late * 1000)
        self.deliveries.append(((result.timing.first_token or 0) - first_release) * 1000)
        self.gaps.extend(g * 1000 for g in result.timing.chunk_gaps_s())
        self.total_tokens += result.completion_tokens or 0
