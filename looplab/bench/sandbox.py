"""`looplab bench sandbox`: per-operation latency of each sandbox kind, side by side.

For each kind: create (cold) and acquire from a warm pool, exec of `true`, exec of
`python3 -c pass`, the start of a task's pytest (`python3 -m pytest --version`: what every
`run_tests` step and check pays before a test runs), a 4 KiB write+read+list (an agent's
usual file step: each goes through the in-sandbox helper, never a host-side open), a 1 MiB
write+read, close; p50/p95 over `reps` repetitions each.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from looplab.sandbox_contract import Sandbox, SandboxConfig
from looplab.sandboxes.factory import open_sandbox
from looplab.sandboxes.pool import SandboxPool

__all__ = ["OPERATIONS", "BenchReport", "OpStats", "run_bench"]

OPERATIONS = (
    "create_cold",
    "acquire_warm",
    "exec_true",
    "exec_python",
    "exec_pytest",
    "file_4kib_write_read_list",
    "file_1mib_write_read",
    "close",
)
_MIB = b"\x5a" * (1024 * 1024)
_SMALL = b"\x5a" * 4096


@dataclass(frozen=True)
class OpStats:
    """Latency of one operation of one kind, in milliseconds."""

    p50_ms: float
    p95_ms: float
    mean_ms: float
    reps: int


@dataclass
class BenchReport:
    """All numbers of one benchmark run (what the JSON file holds)."""

    started: str
    reps: int
    kinds: dict[str, dict[str, OpStats]] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)

    def ratio(self, numerator: str, denominator: str, op: str) -> float | None:
        """p50 of `op` of one kind divided by another's (None if either is missing)."""
        top = self.kinds.get(numerator, {}).get(op)
        bottom = self.kinds.get(denominator, {}).get(op)
        if top is None or bottom is None or bottom.p50_ms == 0:
            return None
        return top.p50_ms / bottom.p50_ms

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict, with docker/local p50 ratios."""
        data = asdict(self)
        data["ratio_docker_local_p50"] = {
            op: self.ratio("docker", "local", op) for op in OPERATIONS
        }
        return data


def _stats(samples: list[float]) -> OpStats:
    """p50/p95/mean in ms of samples in seconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return OpStats(
        p50_ms=statistics.median(ordered) * 1000,
        p95_ms=p95 * 1000,
        mean_ms=statistics.fmean(ordered) * 1000,
        reps=len(ordered),
    )


async def _timed(operation: Callable[[], Awaitable[object]]) -> float:
    """Seconds one awaited operation took."""
    started = time.perf_counter()
    await operation()
    return time.perf_counter() - started


async def bench_kind(config: SandboxConfig, reps: int) -> tuple[dict[str, OpStats], str]:
    """Measure every operation of one sandbox kind; return its stats and description."""
    samples: dict[str, list[float]] = {op: [] for op in OPERATIONS}
    for _ in range(reps):
        started = time.perf_counter()
        sandbox = await open_sandbox(config)
        samples["create_cold"].append(time.perf_counter() - started)
        samples["close"].append(await _timed(sandbox.close))
    async with SandboxPool(lambda: open_sandbox(config), size=2) as pool:
        for _ in range(reps):
            await pool.wait_ready()
            started = time.perf_counter()
            warm: Sandbox = await pool.acquire()
            samples["acquire_warm"].append(time.perf_counter() - started)
            await warm.close()
    sandbox = await open_sandbox(config)
    try:
        description = sandbox.description
        for _ in range(reps):
            samples["exec_true"].append(await _timed(lambda: sandbox.exec(["true"])))
            samples["exec_python"].append(
                await _timed(lambda: sandbox.exec(["python3", "-c", "pass"]))
            )
            samples["exec_pytest"].append(
                await _timed(lambda: sandbox.exec(["python3", "-m", "pytest", "--version"]))
            )

            async def write_read() -> None:
                await sandbox.write_file("bench.bin", _MIB)
                if len(await sandbox.read_file("bench.bin")) != len(_MIB):
                    raise AssertionError("1 MiB read back short")

            async def small_file_step() -> None:
                await sandbox.write_file("notes/bench.txt", _SMALL)
                if len(await sandbox.read_file("notes/bench.txt")) != len(_SMALL):
                    raise AssertionError("4 KiB read back short")
                await sandbox.list_files("notes")

            samples["file_4kib_write_read_list"].append(await _timed(small_file_step))
            samples["file_1mib_write_read"].append(await _timed(write_read))
    finally:
        await sandbox.close()
    return {op: _stats(values) for op, values in samples.items()}, description


async def run_bench(kinds: list[str], reps: int, base: SandboxConfig | None = None) -> BenchReport:
    """Benchmark each kind in turn (never concurrently: they would share the cores).

    Args:
        kinds: `local`, `docker`, and `docker-api` (Docker with one exec API call per
            command instead of the in-container helper: the baseline it is measured against).
        reps: repetitions per operation (>= 50 for the published numbers).
        base: settings shared by both kinds (kind is replaced).

    Returns:
        The report.

    Raises:
        PrerequisiteError: a kind's prerequisite is missing (engine, image).
    """
    base = base or SandboxConfig()
    report = BenchReport(started=datetime.now(UTC).isoformat(), reps=reps)
    for kind in kinds:
        if kind == "docker-api":  # the baseline the in-container helper replaces
            config = base.model_copy(update={"kind": "docker", "exec_mode": "api"})
        else:
            config = base.model_copy(update={"kind": kind})
        report.kinds[kind], report.descriptions[kind] = await bench_kind(config, reps)
    return report


def run_bench_sync(kinds: list[str], reps: int) -> BenchReport:
    """`run_bench` for synchronous callers (the CLI)."""
    return asyncio.run(run_bench(kinds, reps))
