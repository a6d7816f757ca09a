"""The runner end to end: traces, store, resume after a real kill, virtual vs wall."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.report.data.records import load_runs
from looplab.report.views.report_model import headline
from looplab.traces.io import read_trace
from looplab.traces.schema import ModelCallEvent, RunEndEvent, StepEvent
from looplab.traces.store import ResultStore


def _run(config: dict[str, Any]) -> Any:
    import asyncio

    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=False)
    return asyncio.run(runner.run())


# the faster profile's wall-clock model time below the slower's (5,000 vs 2,000 tok/s:
# 0.97 s vs 0.92 s beside two other workers, the order reversed)
@pytest.mark.timing
def test_experiment_writes_complete_traces_and_index(small_config: dict[str, Any]) -> None:
    """Each cell gets a complete trace; the store indexes runs, steps and calls."""
    result = _run(small_config)
    assert [o.status for o in result.outcomes] == ["done", "done"]
    assert all(o.success for o in result.outcomes)
    for outcome in result.outcomes:
        trace = read_trace(outcome.trace_path)
        assert trace.complete
        steps = trace.steps()
        assert len(steps) == 4
        end = trace.end
        assert isinstance(end, RunEndEvent) and end.success
        calls = [e for e in trace.events if isinstance(e, ModelCallEvent)]
        assert all(c.first_token is not None and c.completion_tokens for c in calls)
        # the step split adds up to each step's wall time
        for step in steps:
            assert abs(step.model_s + step.tool_s + step.overhead_s - step.duration_s) < 1e-6
    with ResultStore(result.database) as store:
        assert store.query("SELECT count(*) FROM runs WHERE complete")[0][0] == 2
        assert store.query("SELECT count(*) FROM model_calls")[0][0] == 8
        # model time is paced by the profiles; task time also holds tool noise (load)
        model_s = dict(store.query("SELECT backend, sum(model_s) FROM runs GROUP BY backend"))
    assert model_s["fastish"] < model_s["slowish"]
    summary = {g.label: g for g in headline(load_runs([result.directory / "traces"]))}
    assert set(summary) == {"fastish", "slowish"} and summary["slowish"].speedup == 1.0


def test_rerun_skips_complete_cells(small_config: dict[str, Any]) -> None:
    """Running the same experiment again runs nothing and counts nothing twice."""
    _run(small_config)
    again = _run(small_config)
    assert [o.status for o in again.outcomes] == ["skipped", "skipped"]
    with ResultStore(again.database) as store:
        assert store.query("SELECT count(*) FROM runs")[0][0] == 2


def test_changed_config_in_same_directory_is_refused(small_config: dict[str, Any]) -> None:
    """A different experiment cannot silently mix into an existing directory."""
    import pytest

    from looplab.errors import ConfigError

    _run(small_config)
    small_config["repetitions"] = 2
    runner = ExperimentRunner(validate_model(ExperimentConfig, small_config))
    with pytest.raises(ConfigError, match="different experiment"):
        runner.prepare_directory(fresh=False)


def test_resume_after_the_process_is_killed(tmp_path: Path, small_config: dict[str, Any]) -> None:
    """SIGKILL mid-run leaves an incomplete trace; resume reruns only what is missing."""
    # virtual clock: a run lasts as long as its tools take (a second or more), long enough to
    # be caught under way; a wall-clock 300 tok/s model only added seconds of pacing
    small_config["clock"] = "virtual"
    small_config["tasks"] = ["coding/fix-pager", "coding/fix-discount"]
    config_path = tmp_path / "exp.yaml"
    config_path.write_text(yaml.safe_dump(small_config))
    traces = Path(small_config["output_dir"]) / "traces"
    env = {**os.environ, "LOOPLAB_LOG_FILE": os.devnull}
    process = subprocess.Popen(
        [sys.executable, "-m", "looplab", "run", str(config_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.perf_counter() + 60
        while time.perf_counter() < deadline:
            states = [read_trace(p).complete for p in traces.glob("*.jsonl")]
            if True in states and False in states:
                break  # one run finished and the next one is under way
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    before = {p.name: read_trace(p).complete for p in traces.glob("*.jsonl")}
    assert False in before.values(), f"expected a cut-off run, found {before}"
    result = _run(small_config)
    statuses = {o.cell.id: o.status for o in result.outcomes}
    assert sorted(statuses.values()).count("done") == list(before.values()).count(False) + (
        4 - len(before)
    )
    assert all(read_trace(p).complete for p in traces.glob("*.jsonl"))
    assert list((traces / "incomplete").glob("*.jsonl")), "the cut-off trace is kept aside"
    with ResultStore(result.database) as store:
        assert store.query("SELECT count(*) FROM runs")[0][0] == 4


# the wall-clock run's model time within 2% of the virtual clock's: 9.15 s vs 8.86 s
# (3.2%) beside two other workers in CI
@pytest.mark.timing
def test_virtual_clock_matches_wall_clock(small_config: dict[str, Any], tmp_path: Path) -> None:
    """On the virtual clock model time matches the wall clock's within 2%, task time within 3%.

    Tools really run in both modes, so their (noisy) measured difference is taken out of
    the task-time comparison.
    """
    small_config["backends"][0]["overrides"] = {"decode_tps": 150, "ttft_s": 0.05}
    small_config["backends"] = small_config["backends"][:1]
    wall = _run({**small_config, "output_dir": str(tmp_path / "wall")})
    virtual = _run({**small_config, "output_dir": str(tmp_path / "virtual"), "clock": "virtual"})
    wall_end = read_trace(wall.outcomes[0].trace_path).end
    virtual_end = read_trace(virtual.outcomes[0].trace_path).end
    assert wall_end is not None and virtual_end is not None
    assert wall_end.model_s and virtual_end.model_s
    assert abs(virtual_end.model_s - wall_end.model_s) / wall_end.model_s < 0.02
    tool_noise = (virtual_end.tool_s or 0.0) - (wall_end.tool_s or 0.0)
    wall_s, virtual_s = wall_end.end, virtual_end.end - tool_noise
    assert abs(virtual_s - wall_s) / wall_s < 0.03, (wall_s, virtual_s, tool_noise)
    header = read_trace(virtual.outcomes[0].trace_path).header
    assert header.clock == "virtual"
    steps = read_trace(virtual.outcomes[0].trace_path).steps()
    assert all(isinstance(s, StepEvent) for s in steps)
    assert json.loads((tmp_path / "virtual" / "config.json").read_text())["clock"] == "virtual"
