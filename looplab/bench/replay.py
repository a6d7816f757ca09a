"""`looplab bench replay`: re-timing throughput and the harness's own overhead per step.

1. Re-timing throughput: synthetic traces shaped like the TraceLab medians (214 output
   tokens and ~875 new prompt tokens per step on a growing cached prefix), re-timed
   (a) by the sweep's totals-only fast path over a grid of rates and (b) by the full
   event time-warp of `looplab replay --mode virtual`. Reported as steps per second.
2. Harness overhead: a real experiment (coding tasks, local sandbox, virtual clock, so
   model waits cost nothing) and, per step, wall time minus model and tool time: the
   agent loop's own routing, bookkeeping and serialization. Target p50 <= 3 ms.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from looplab.analysis.retime import profile_model_timing, retime_events, sweep_trace
from looplab.clock import utc_now
from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.latency.presets import resolve_profile
from looplab.latency.spec import recorded_profile
from looplab.layout import ExperimentDir
from looplab.stats.order import quantile
from looplab.traces.assembly.axis import RunAxis
from looplab.traces.assembly.builder import EventBuilder
from looplab.traces.assembly.items import ModelDraft, RunEndDraft, StepDraft, ToolDraft
from looplab.traces.end_reason import EndReason
from looplab.traces.io import Trace, read_trace
from looplab.traces.schema import ToolCallEvent, TraceEvent, TraceHeader

__all__ = ["ReplayBench", "run_replay_bench", "synthetic_trace"]


@dataclass(frozen=True)
class ReplayBench:
    """Results of `looplab bench replay`."""

    sweep_steps_per_s: float
    warp_steps_per_s: float
    steps_retimed: int
    overhead_ms_p50: float
    overhead_ms_p95: float
    overhead_steps: int


def synthetic_trace(steps: int, run_id: str = "synthetic") -> Trace:
    """A trace of `steps` TraceLab-median steps (model 4.9 s-ish, tools 0.1 s)."""
    builder = EventBuilder(run_id, RunAxis(0.0))
    events: list[TraceEvent] = []
    t = 0.0
    prefix = 20_000
    for step in range(steps):
        prompt = prefix + 875
        start = t
        call = ModelDraft(
            start=start,
            end=start + 3.0,
            sent=start + 0.001,
            first_token=start + 0.5,
            last_token=start + 2.99,
            prompt_tokens=prompt,
            cached_tokens=prefix,
            completion_tokens=214,
            reasoning_tokens=0,
        )
        tool = ToolDraft(name="run_shell", start=start + 3.001, end=start + 3.1)
        t = start + 3.102
        events += builder.step(step, StepDraft(model=call, tools=[tool], start=start, end=t))
        prefix = prompt + 214
    events.append(builder.run_end(RunEndDraft(end_reason=EndReason.FINISH, end_time=t)))
    header = TraceHeader(run_id=run_id, created=utc_now())
    return Trace(header=header, events=events)


def run_replay_bench(traces: int = 50, steps: int = 200) -> ReplayBench:
    """Measure both parts (see the module docstring)."""
    base = resolve_profile("slow-80")
    corpus = [synthetic_trace(steps, f"t{i}") for i in range(traces)]
    rates = [20.0, 40.0, 80.0, 160.0, 320.0, 750.0, 1000.0, 2000.0, 5000.0]
    started = time.perf_counter()
    for trace in corpus:
        sweep_trace(trace, rates, [0.3], base)
    sweep_s = time.perf_counter() - started
    timing = profile_model_timing(resolve_profile("fast-750"))
    started = time.perf_counter()
    for trace in corpus[:10]:
        retime_events(trace.events, timing, "bench")
    warp_s = time.perf_counter() - started
    overheads = _harness_overheads()
    return ReplayBench(
        sweep_steps_per_s=traces * steps * len(rates) / sweep_s,
        warp_steps_per_s=10 * steps / warp_s,
        steps_retimed=traces * steps * len(rates),
        overhead_ms_p50=quantile(overheads, 0.5) * 1000,
        overhead_ms_p95=quantile(overheads, 0.95) * 1000,
        overhead_steps=len(overheads),
    )


def _harness_overheads() -> list[float]:
    with tempfile.TemporaryDirectory(prefix="looplab-bench-") as directory:
        config = validate_model(
            ExperimentConfig,
            {
                "name": "bench-overhead",
                "backends": [{"name": "fast-750", "profile": "fast-750"}],
                "tasks": ["coding/fix-pager", "coding/nbugs-8"],
                "clock": "virtual",
                "output_dir": directory,
            },
        )
        runner = ExperimentRunner(config)
        runner.prepare_directory(fresh=True)
        asyncio.run(runner.run())
        overheads: list[float] = []
        for path in ExperimentDir(Path(directory)).trace_files():
            overheads.extend(step.overhead_s for step in read_trace(path).steps())
    return overheads


@dataclass(frozen=True)
class ClockPair:
    """One cell's task time on the wall clock and on the virtual clock."""

    cell: str
    wall_s: float
    virtual_s: float
    retimed_s: float | None = None
    """The wall-clock trace re-timed virtually at its own profile (`replay --mode virtual`)."""
    tool_change_s: float = 0.0
    """Virtual minus wall of the summed tool-call durations: the tools' own run-to-run
    change (machine load), which no clock accounts for."""

    @property
    def tool_corrected_pct(self) -> float:
        """The difference with the tools' own change taken out (exact when no tool
        overlaps a model call, approximate otherwise), in percent."""
        return (self.virtual_s - self.tool_change_s - self.wall_s) / self.wall_s * 100

    @property
    def difference_pct(self) -> float:
        """(virtual - wall) / wall, in percent."""
        return (self.virtual_s - self.wall_s) / self.wall_s * 100

    @property
    def retimed_difference_pct(self) -> float | None:
        """(re-timed - wall) / wall, in percent."""
        if self.retimed_s is None:
            return None
        return (self.retimed_s - self.wall_s) / self.wall_s * 100


def run_clock_bench(config_path: Path, overrides: list[str]) -> list[ClockPair]:
    """Run one experiment twice, wall then virtual clock, and pair the cells' task times;
    each wall-clock trace is also re-timed virtually at its own profile, from its token
    counts (what `looplab replay --mode virtual` and `sweep` predict).

    Cells run one at a time (`concurrency=1` unless overridden): the virtual clock removes
    model waits, so concurrent cells' tools would overlap (and contend for CPU) more than
    on the wall clock, which is a difference of the set-up, not of the clock.
    """
    from looplab.config import load_model

    times: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="looplab-clock-") as directory:
        for clock in ("wall", "virtual"):
            config = load_model(
                ExperimentConfig,
                config_path,
                ["concurrency=1", *overrides, f"clock={clock}", f"output_dir={directory}/{clock}"],
            )
            runner = ExperimentRunner(config)
            runner.prepare_directory(fresh=True)
            result = asyncio.run(runner.run())
            for outcome in result.outcomes:
                if outcome.task_s is not None:
                    times.setdefault(outcome.cell.id, {})[clock] = outcome.task_s
                    times[outcome.cell.id][f"{clock}_tools"] = _tool_run_s(outcome.trace_path)
                if clock == "wall" and outcome.task_s is not None:
                    retimed = _retimed_s(outcome.trace_path)
                    if retimed is not None:
                        times[outcome.cell.id]["retimed"] = retimed
    return [
        ClockPair(
            cell,
            pair["wall"],
            pair["virtual"],
            pair.get("retimed"),
            tool_change_s=pair["virtual_tools"] - pair["wall_tools"],
        )
        for cell, pair in sorted(times.items())
        if "wall" in pair and "virtual" in pair
    ]


def _tool_run_s(path: Path) -> float:
    """Summed durations of a trace's tool calls."""
    return sum(e.end - e.start for e in read_trace(path).events if isinstance(e, ToolCallEvent))


def _retimed_s(path: Path) -> float | None:
    """Task time of a recorded trace re-timed at its own profile (None: no profile)."""
    from looplab.analysis.replay import replay_virtual

    trace = read_trace(path)
    profile = recorded_profile(trace.header.profile)
    if profile is None:
        return None
    replayed = replay_virtual(trace, profile)
    return replayed.end.end if replayed.end is not None else None
