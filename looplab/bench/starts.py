"""`looplab bench starts`: what starting a looplab server process costs (`serve`, and
`proxy` in front of it, as `wrap` starts one per wrapped agent): wall seconds from launch to
its first `/health` answer, and the CPU seconds it spent getting there (imports, the
tokenizer's warm-up), medians over repeated starts, measured side by side in one run.
Then the tokenizer's own load, each loader of `looplab.latency.tokens` in a fresh Python
(tiktoken from looplab's seeded cache, the default, against importing bpe-openai), CPU
seconds, medians, and whether both count the same tokens on a sample.

The tests start these commands ~140 times, so their start-up CPU is a share of the suite's.
Printed here (2026-12-07, 2 cores, bytecode cached, p50 of 5): serve 1.30 s and proxy 1.37 s
of CPU, against 1.45 s and 1.86 s for c2ad271 run beside it; tokenizer load 0.67 s
(tiktoken, seeded cache) against 1.08 s (bpe-openai), 899 tokens of looplab/README.md
each. (2026-12-05's 0.73 s for both was printed on a quieter machine.)
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from looplab.bench.loadgen import ServerProcess

__all__ = ["LOADERS", "StartStats", "TokenizerLoad", "measure_starts", "measure_tokenizer_loads"]


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


LOADERS = ("_load_tiktoken", "_load_bpe_openai")
"""`looplab.latency.tokens`' two exact loaders, in its order of preference."""

_LOAD = """
import json, resource, sys
from looplab.latency import tokens
before = resource.getrusage(resource.RUSAGE_SELF)
loaded = getattr(tokens, sys.argv[1])()
after = resource.getrusage(resource.RUSAGE_SELF)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
sample = open(sys.argv[2], encoding="utf-8").read()
print(json.dumps([loaded.name if loaded else None, cpu, loaded.count(sample) if loaded else 0]))
"""


@dataclass(frozen=True)
class TokenizerLoad:
    """One loader's load in fresh processes."""

    loader: str
    name: str | None
    """The tokenizer it gave (None: it does not load here)."""
    cpu_s_p50: float
    tokens: int
    """Its count of the sample (every loader must agree)."""


def measure_tokenizer_loads(reps: int, sample: str) -> list[TokenizerLoad]:
    """Each of `LOADERS` loaded `reps` times, each in a new Python (so nothing is cached in
    the process; looplab's tiktoken cache is seeded by the first load), its CPU from the
    call alone (imports of looplab itself excluded), and its count of the file `sample`."""
    out = []
    for loader in LOADERS:
        cpus: list[float] = []
        name, tokens = None, 0
        for _ in range(reps):
            done = subprocess.run(
                [sys.executable, "-c", _LOAD, loader, sample],
                capture_output=True,
                text=True,
                check=True,
                timeout=120,
            )
            name, cpu, tokens = json.loads(done.stdout.strip().splitlines()[-1])
            cpus.append(float(cpu))
        out.append(TokenizerLoad(loader, name, statistics.median(cpus), int(tokens)))
    return out
