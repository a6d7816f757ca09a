"""`looplab bench workload`: trace-driven live runs against virtual re-timing, run by run.

For each recorded trace (default: from the shipped corpus, per harness, the shortest run
of at least 5 steps with token counts on every call) and each profile (default slow-80
and fast-750), the trace's shape runs LIVE (wall clock: the simulator paces the recorded
token counts, the workload agent's synthetic tools really work in the sandbox, the
harness time is emulated) as an ordinary experiment (`trace:PATH` tasks, all cells
concurrently by default), and the same recorded trace is re-timed virtually at the same
profile with the function `looplab replay --mode virtual` uses. The benchmark prints
both task times and their difference per run, the median and the worst case, and splits
each difference into model, tool and other time so an outlier says where it comes from.

The runs of one profile share one simulator. With a profile whose decode slows with
concurrent streams (`batch_slowdown`, `server_max_tps`) they would slow each other, which
re-timing one trace at a time does not do: run such profiles with `concurrency=1` (the
shipped pair, slow-80 and fast-750, is flat).

Tool times may be shortened by `tool_scale` (applied to both sides: the live shape's
tool calls, and the prediction minus `(1 - tool_scale) x` the shape's tool time).
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from looplab.analysis.replay import replay_virtual
from looplab.config import validate_model
from looplab.errors import ConfigError, TraceError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.latency.presets import resolve_profile
from looplab.latency.profile import LatencyProfile
from looplab.tasks.references import TRACE_PREFIX
from looplab.traces.corpus import list_corpus, load_corpus, select
from looplab.traces.inputs import load_traces
from looplab.traces.io import Trace, read_trace
from looplab.workloads.shape import shape_from_trace

__all__ = ["BenchRow", "WorkloadBench", "bench_traces", "run_workload_bench", "split_times"]


@dataclass(frozen=True)
class Split:
    """A run's task time and its model / tools / other parts (seconds)."""

    task_s: float
    model_s: float
    tool_s: float

    @property
    def other_s(self) -> float:
        """Task time that is neither model nor tools."""
        return self.task_s - self.model_s - self.tool_s


def split_times(trace: Trace) -> Split:
    """Task time (run_end), model time (each call from sent, or from its start when the
    send time is unknown, to its end) and tools phase time (steps). A recorded client
    queue (scheduled -> sent) counts as other time, as the trace's shape plays it."""
    end = trace.end
    task = end.end if end is not None else 0.0
    model = sum(c.end - (c.sent if c.sent is not None else c.start) for c in trace.model_calls())
    return Split(task, model, sum(s.tool_s for s in trace.steps()))


@dataclass(frozen=True)
class BenchRow:
    """One recorded trace at one profile: live vs predicted."""

    run: str
    profile: str
    steps: int
    live: Split
    predicted: Split
    loop_lag_p99_ms: float | None
    notes: list[str]

    @property
    def difference_pct(self) -> float:
        """(live - predicted) / predicted, in percent."""
        return 100.0 * (self.live.task_s - self.predicted.task_s) / self.predicted.task_s


@dataclass
class WorkloadBench:
    """All rows, the traces that could not run, and where the live runs are."""

    rows: list[BenchRow] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    directory: Path | None = None

    def median_abs_pct(self) -> float:
        """Median |difference| over all rows (NaN without rows)."""
        values = [abs(r.difference_pct) for r in self.rows]
        return statistics.median(values) if values else float("nan")


def _label(profile: str) -> str:
    """A backend name for a preset name or a profile YAML path (its stem)."""
    return Path(profile).stem if profile.endswith((".yaml", ".yml")) else profile


DEFAULT_MIN_STEPS = 5
"""Default corpus picks have at least this many steps: a one-call run says more about a
run's fixed start-up cost than about how per-step latency compounds."""


def _usable(traces: Sequence[Trace]) -> tuple[list[Trace], list[str]]:
    """Traces with a shape, shortest recorded first; and why the others were left out."""
    usable, skipped = [], []
    for trace in traces:
        try:
            shape_from_trace(trace)
        except TraceError as exc:
            skipped.append(str(exc))
            continue
        usable.append(trace)
    usable.sort(key=lambda t: t.end.end if t.end else 0.0)
    return usable, skipped


def bench_traces(inputs: Sequence[Path] | None, limit: int) -> tuple[list[Trace], list[str]]:
    """The traces to run: from `inputs` the `limit` shortest usable ones; without inputs,
    from the shipped corpus, per harness, the shortest run of at least `DEFAULT_MIN_STEPS`
    steps whose every call has token counts (at most `limit`).

    Raises:
        ConfigError: an input without traces, or no usable trace at all.
    """
    if inputs:
        usable, skipped = _usable(load_traces(inputs))
        chosen = usable[:limit]
    else:
        usable, skipped = _usable(load_corpus(select(list_corpus(), timed=True)))
        per_harness: dict[str, Trace] = {}
        for trace in usable:
            shape = shape_from_trace(trace)
            if len(shape.steps) >= DEFAULT_MIN_STEPS and not shape.notes:
                per_harness.setdefault(trace.header.source, trace)
        chosen = sorted(per_harness.values(), key=lambda t: t.end.end if t.end else 0.0)
        chosen, skipped = chosen[:limit], []
    if not chosen:
        raise ConfigError(
            "no usable trace (a trace-driven run needs complete traces with token counts)",
            field="TRACES",
        )
    return chosen, skipped


def run_workload_bench(
    traces: Sequence[Trace],
    *,
    profiles: Sequence[str] = ("slow-80", "fast-750"),
    tool_scale: float = 1.0,
    concurrency: int | None = None,
    sandbox: str = "local",
    output: Path | None = None,
) -> WorkloadBench:
    """Run the benchmark (module docstring) on `traces` (see `bench_traces`); keeps the
    live runs in `output` if given.

    Raises:
        ConfigError: a bad profile, scale or sandbox.
    """
    by_task = {f"{TRACE_PREFIX}{t.path}": t for t in traces}
    directory = output or Path(tempfile.mkdtemp(prefix="looplab-bench-workload-"))
    config = validate_model(
        ExperimentConfig,
        {
            "name": "bench-workload",
            "backends": [{"name": _label(p), "profile": p} for p in profiles],
            "tasks": list(by_task),
            "concurrency": concurrency or min(64, len(by_task) * len(profiles)),
            "workload": {"tool_scale": tool_scale},
            "sandbox": {"kind": sandbox},
            "output_dir": str(directory),
        },
        source="looplab bench workload",
    )
    result = WorkloadBench(directory=output)
    try:
        runner = ExperimentRunner(config)
        runner.prepare_directory(fresh=True)
        outcomes = asyncio.run(runner.run()).outcomes
        for outcome in outcomes:
            if outcome.status != "done":
                result.failed.append(f"{outcome.cell.id}: {outcome.error}")
                continue
            source = by_task[outcome.cell.task]
            profile = resolve_profile(outcome.cell.backend.profile or outcome.cell.backend.name, [])
            result.rows.append(_row(source, read_trace(outcome.trace_path), profile, tool_scale))
    finally:
        if output is None:
            shutil.rmtree(directory, ignore_errors=True)
    result.rows.sort(key=lambda r: (r.run, r.profile))
    return result


def _row(source: Trace, live: Trace, profile: LatencyProfile, tool_scale: float) -> BenchRow:
    shape = shape_from_trace(source)
    removed = (1.0 - tool_scale) * sum(step.tool_s for step in shape.steps)
    virtual = split_times(replay_virtual(source, profile))
    predicted = Split(virtual.task_s - removed, virtual.model_s, virtual.tool_s - removed)
    kept = sum(1 for c in source.model_calls() if c.completion_tokens is None)
    notes = list(shape.notes)
    if kept:
        notes.append(f"{kept} call(s) without token counts keep their recorded time")
    first = live.model_calls()[0] if live.model_calls() else None
    if first is not None and first.sent is not None and first.sent - first.start > 0.05:
        notes.append(
            f"the live run's first call waited {first.sent - first.start:.2f} s before it "
            "was sent (client start-up, more when many runs start at once)"
        )
    end = live.end
    return BenchRow(
        run=source.header.run_id,
        profile=profile.name,
        steps=len(shape.steps),
        live=split_times(live),
        predicted=predicted,
        loop_lag_p99_ms=end.loop_lag_p99_ms if end is not None else None,
        notes=notes,
    )
