"""`looplab bench proxy`: what the pacing proxy adds, against the simulator direct.

One run, side by side, at each concurrency (1/16/64 streams by default):

- **direct**: `looplab serve` at the bench profile (fast-750 at `--rate`, 50 ms TTFT, no
  prefill), loaded through the real openai client;
- **proxy**: `looplab proxy` at the same profile in front of a `looplab serve` upstream
  20x faster with no TTFT, loaded the same way.

Per path: client-measured TTFT error (client TTFT - the profile's intended TTFT, which the
server or proxy reports per request), the server's own release lateness (p50/p99 of
every token's actual - intended release, from its timing endpoint: the simulator's for
direct, the proxy's for proxy), and the decode-rate error at the client. **Added TTFT**
is the proxy path's TTFT error minus the direct path's (same percentile). The load
generator runs in its own worker processes (`looplab.backends.loadgen`); every server is
its own process. Targets: added TTFT <= 2 ms p50, |rate error| <= 0.5%.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

from looplab.backends.bench import bench_profile_args
from looplab.backends.client import ModelResponse
from looplab.backends.loadgen import LoadGenerator, LoadSpec, ServerProcess, attach_server_timing
from looplab.errors import BackendError
from looplab.stats import quantile

__all__ = ["PathStats", "ProxyBenchRow", "print_proxy_bench", "run_proxy_bench"]

TTFT_S = 0.05
UPSTREAM_SPEEDUP = 20


@dataclass
class PathStats:
    """One path (direct or proxy) at one concurrency; ms and %."""

    streams: int
    ttft_error_ms_p50: float
    ttft_error_ms_p99: float
    late_ms_p50: float
    late_ms_p99: float
    rate_error_pct_p50: float
    rate_error_pct_worst: float
    upstream_slower: int = 0
    cpu_ms_per_1k: float = 0.0


@dataclass
class ProxyBenchRow:
    """Direct and proxy side by side at one concurrency."""

    concurrency: int
    direct: PathStats
    proxy: PathStats

    @property
    def added_ttft_ms_p50(self) -> float:
        """Proxy TTFT error minus direct TTFT error, p50."""
        return self.proxy.ttft_error_ms_p50 - self.direct.ttft_error_ms_p50

    @property
    def added_ttft_ms_p99(self) -> float:
        """The same at p99."""
        return self.proxy.ttft_error_ms_p99 - self.direct.ttft_error_ms_p99

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            **asdict(self),
            "added_ttft_ms_p50": self.added_ttft_ms_p50,
            "added_ttft_ms_p99": self.added_ttft_ms_p99,
        }


def run_proxy_bench(
    *,
    rate: float = 750.0,
    concurrencies: Sequence[int] = (1, 16, 64),
    tokens: int = 400,
    min_streams: int = 16,
    progress: Callable[[str], None] | None = None,
) -> list[ProxyBenchRow]:
    """Measure both paths at each concurrency (see the module docstring).

    Raises:
        BackendError: a server does not start, or a request fails or returns no timing.
    """
    profile = bench_profile_args(rate, tokens, TTFT_S)
    upstream_args = bench_profile_args(rate * UPSTREAM_SPEEDUP, tokens, 0.0)
    rows: list[ProxyBenchRow] = []
    with (
        LoadGenerator() as load,
        ServerProcess(["serve", *profile]) as direct,
        ServerProcess(["serve", *upstream_args]) as upstream,
        ServerProcess(["proxy", "--upstream", upstream.base_url, *profile]) as proxy,
    ):
        for concurrency in concurrencies:
            rounds = max(1, -(-min_streams // concurrency))
            stats = []
            for name, server, extra in (("direct", direct, None), ("proxy", proxy, upstream)):
                if progress:
                    progress(f"{name:>6}, {rate:g} tok/s, {concurrency} streams")
                spec = LoadSpec(server.base_url, concurrency, rounds, TTFT_S + tokens / rate,
                                tag=f"{name}-{concurrency}")  # fmt: skip
                cpu0 = server.cpu_s() + (extra.cpu_s() if extra else 0.0)
                result = load.run(spec)
                cpu = server.cpu_s() + (extra.cpu_s() if extra else 0.0) - cpu0
                attach_server_timing(server.base_url, result.responses)
                stats.append(_path_stats(name, result.responses, rate, cpu))
            rows.append(ProxyBenchRow(concurrency, stats[0], stats[1]))
    return rows


def _path_stats(name: str, responses: list[ModelResponse], rate: float, cpu_s: float) -> PathStats:
    ttft_errors: list[float] = []
    late50: list[float] = []
    late99: list[float] = []
    rate_errors: list[float] = []
    slower = 0
    tokens = 0
    for response in responses:
        record = response.server_timing
        achieved = response.decode_rate_tps
        if record is None or achieved is None or response.timing.ttft_s is None:
            raise BackendError(f"{name}: a stream returned no timing ({response.finish_reason})")
        if name == "proxy":
            intended_first = record["scheduled_first_s"]
            pacing = record.get("pacing") or {}
            slower += bool(record.get("upstream_slower"))
        else:
            intended_first = record["intended_first_s"]
            pacing = record
        ttft_errors.append((response.timing.ttft_s - intended_first) * 1000)
        late50.append((pacing.get("lateness_p50_s") or 0.0) * 1000)
        late99.append((pacing.get("lateness_p99_s") or 0.0) * 1000)
        rate_errors.append((achieved / rate - 1) * 100)
        tokens += response.completion_tokens or 0
    return PathStats(
        streams=len(responses),
        ttft_error_ms_p50=statistics.median(ttft_errors),
        ttft_error_ms_p99=quantile(ttft_errors, 0.99),
        late_ms_p50=statistics.median(late50),
        late_ms_p99=quantile(late99, 0.99),
        rate_error_pct_p50=statistics.median(rate_errors),
        rate_error_pct_worst=max(rate_errors, key=abs),
        upstream_slower=slower,
        cpu_ms_per_1k=cpu_s / max(1, tokens) * 1e6,
    )


def print_proxy_bench(
    console: Console, rows: list[ProxyBenchRow], rate: float, tokens: int
) -> None:
    """The side-by-side table and the verdict against the targets."""
    table = Table(
        title=f"looplab bench proxy: {rate:g} tok/s, {tokens} tokens/stream; "
        "TTFT error and server release lateness in ms"
    )
    columns = (
        "streams", "path", "TTFT err p50", "p99", "server late p50", "p99", "rate err%",
        "worst%", "added TTFT p50", "p99", "upstream slower", "server CPU ms/1k",
    )  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        for name, stats in (("direct", row.direct), ("proxy", row.proxy)):
            proxied = name == "proxy"
            table.add_row(
                str(row.concurrency),
                name,
                f"{stats.ttft_error_ms_p50:.2f}",
                f"{stats.ttft_error_ms_p99:.2f}",
                f"{stats.late_ms_p50:.2f}",
                f"{stats.late_ms_p99:.2f}",
                f"{stats.rate_error_pct_p50:+.2f}",
                f"{stats.rate_error_pct_worst:+.2f}",
                f"{row.added_ttft_ms_p50:+.2f}" if proxied else "",
                f"{row.added_ttft_ms_p99:+.2f}" if proxied else "",
                f"{stats.upstream_slower}/{stats.streams}" if proxied else "",
                f"{stats.cpu_ms_per_1k:.0f}",
                style="bold" if proxied else "dim",
            )
    console.print(table)
    worst_added = max(row.added_ttft_ms_p50 for row in rows)
    worst_rate = max(abs(row.proxy.rate_error_pct_p50) for row in rows)
    console.print(
        f"proxy: added TTFT p50 at most {worst_added:+.2f} ms (target <= 2), |rate error| p50 "
        f"at most {worst_rate:.2f}% (target <= 0.5%); the server-late columns are each "
        "server's own release lateness, so a TTFT error they do not show is on the client's "
        "or the network's side"
    )
