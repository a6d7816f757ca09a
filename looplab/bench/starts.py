"""`looplab bench starts`: what starting a looplab server process costs (`serve`, and
`proxy` in front of it, as `wrap` starts one per wrapped agent): wall seconds from launch to
its first `/health` answer, and the CPU seconds it spent getting there (imports, the
tokenizer's warm-up), medians over repeated starts, measured side by side in one run.

The tests start these commands ~140 times, so their start-up CPU is a share of the suite's.
Printed here (2026-12-05, 2 cores, bytecode cached): serve and proxy 0.73 s of CPU each
(p50 of 5); by hand before the proxy stopped importing the openai SDK, 1.28 s.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from looplab.bench.loadgen import ServerProcess

__all__ = ["StartStats", "measure_starts"]


@dataclass(frozen=True)
class StartStats:
    """One command's starts."""

    command: str
    starts: int
    wall_s_p50: float
    cpu_s_p50: float
    cpu_s_max: float


def measure_starts(reps: int, profile: Sequence[str] = ()) -> list[StartStats]:
    """Start `serve` `reps` times, and `proxy` in front of one `serve` `reps` times; each
    started, answered and stopped before the next (nothing is left running)."""
    walls: dict[str, list[float]] = {"serve": [], "proxy": []}
    cpus: dict[str, list[float]] = {"serve": [], "proxy": []}
    for _ in range(reps):
        with ServerProcess(["serve", *profile]) as served:
            walls["serve"].append(served.ready_s)
            cpus["serve"].append(served.cpu_s())
    with ServerProcess(["serve", *profile]) as upstream:
        for _ in range(reps):
            with ServerProcess(["proxy", "--upstream", upstream.base_url, *profile]) as proxy:
                walls["proxy"].append(proxy.ready_s)
                cpus["proxy"].append(proxy.cpu_s())
    return [
        StartStats(
            name,
            reps,
            statistics.median(walls[name]),
            statistics.median(cpus[name]),
            max(cpus[name]),
        )
        for name in walls
    ]
