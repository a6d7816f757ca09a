"""Trace-driven tasks as experiment cells: `looplab run`, resume, and validation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from looplab.config import validate_model
from looplab.errors import ConfigError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.matrix import expand_cells
from looplab.traces.inputs import load_traces
from looplab.traces.io import read_trace
from looplab.traces.schema import ToolCallEvent
from looplab.workloads.fit import calibrate
from looplab.workloads.model import dump_workload

FAST = {"decode_tps": 20000, "ttft_s": 0.0, "prefill_tps": None}


def _config(tmp_path: Path, fixtures: Path, tasks: list[str]) -> dict[str, Any]:
    return {
        "name": "wl",
        "backends": [
            {"name": "a", "profile": "slow-80", "overrides": FAST},
            {"name": "b", "profile": "fast-750", "overrides": FAST},
        ],
        "tasks": tasks,
        "workload": {"tool_scale": 0.02},
        "concurrency": 2,
        "output_dir": str(tmp_path / "out"),
    }


def _run(config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "LOOPLAB_LOG_FILE": os.devnull}
    return subprocess.run(
        [sys.executable, "-m", "looplab", "run", str(config)],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip


def test_workload_tasks_run_and_resume_through_looplab_run(fixtures: Path, tmp_path: Path) -> None:
    """A trace and a workload model run as cells; a rerun skips them; a cut-off one reruns."""
    model = tmp_path / "hand.yaml"
    model.write_text(dump_workload(calibrate(load_traces([fixtures / "calibrate"]), "hand").model))
    trace = fixtures / "calibrate" / "a.jsonl"
    config = tmp_path / "wl.yaml"
    tasks = [f"trace:{trace}", f"workload:{model}"]
    config.write_text(yaml.safe_dump(_config(tmp_path, fixtures, tasks)))
    first = _run(config)
    assert first.returncode == 0, first.stderr
    traces = sorted((tmp_path / "out" / "traces").glob("*.jsonl"))
    assert len(traces) == 4 and all("__workload__" in p.name for p in traces)
    for path in traces:
        run = read_trace(path)
        assert run.complete and run.end is not None and run.end.success
        tools = [e for e in run.events if isinstance(e, ToolCallEvent)]
        assert tools and all(t.synthetic for t in tools)
        assert any("trace-driven" in note for note in run.header.notes)
    recorded = read_trace(trace)
    replayed = read_trace(next(p for p in traces if "trace-a-" in p.name))
    pairs = zip(replayed.model_calls(), recorded.model_calls(), strict=True)
    for live, then in pairs:  # 10 tokens cannot hold a tool call: the call's slots win
        assert live.completion_tokens == max(then.completion_tokens or 0, 12)
    drawn = [read_trace(p) for p in traces if "workload-hand" in p.name]
    assert len({tuple(c.completion_tokens for c in t.model_calls()) for t in drawn}) == 1
    cut = traces[0]
    lines = cut.read_text().splitlines()
    cut.write_text("\n".join(lines[:-1]) + "\n")  # the run_end is gone: a cut-off run
    second = _run(config)
    assert second.returncode == 0, second.stderr
    assert second.stderr.count("complete trace found, skipped") == 3
    assert len(list((tmp_path / "out" / "traces" / "incomplete").glob("*.jsonl"))) == 1
    assert read_trace(cut).complete


@pytest.mark.parametrize(
    ("tasks", "agents", "expected"),
    [
        (["trace:{missing}"], ["auto"], "no such trace file"),
        (["workload:{bogus}"], ["auto"], "not a workload model"),
        (["trace:{a}"], ["coding"], "runs with the workload agent"),
        (["coding/fix-pager"], ["workload"], "trace-driven tasks only"),
        (["workload/no-such"], ["auto"], "no bundled workload"),
        (["trace:{bogus}"], ["auto"], "expected a complete looplab trace"),
    ],
)
def test_bad_workload_tasks_are_refused_before_running(
    fixtures: Path, tmp_path: Path, tasks: list[str], agents: list[str], expected: str
) -> None:
    """Missing files, wrong files and mismatched agents are ConfigErrors naming the entry."""
    bogus = tmp_path / "bogus.yaml"
    bogus.write_text("name: x\n")
    paths = {
        "{missing}": str(tmp_path / "nope.jsonl"),
        "{bogus}": str(bogus),
        "{a}": str(fixtures / "calibrate" / "a.jsonl"),
    }
    resolved = [t.replace(k, v) for t in tasks for k, v in paths.items() if k in t] or tasks
    data = {**_config(tmp_path, fixtures, resolved), "agents": agents}
    with pytest.raises(ConfigError) as error:
        expand_cells(validate_model(ExperimentConfig, data))
    assert expected in str(error.value)
    assert not (tmp_path / "out").exists()


def test_trace_directory_expands_and_real_backends_are_refused(
    fixtures: Path, tmp_path: Path
) -> None:
    """`trace:DIR` gives one task per trace; a real backend cannot play a shape."""
    data = _config(tmp_path, fixtures, [f"trace:{fixtures / 'calibrate'}"])
    cells = expand_cells(validate_model(ExperimentConfig, data))
    assert len(cells) == 6 and {c.agent for c in cells} == {"workload"}
    assert len({c.id for c in cells}) == 6
    data["backends"].append(
        {"name": "api", "kind": "real", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    )
    with pytest.raises(ConfigError, match="simulated backends"):
        expand_cells(validate_model(ExperimentConfig, data))
    assert json.loads(json.dumps(data))  # the config stays plain data
