"""Issue 44's scenario end to end, as a new user would run it: one plain openai-client
agent of their own (`byo/agent_models.py`), wrapped with `looplab wrap` against a scripted
upstream serving two models (`byo/upstream.py`): `big-slow` at slow-80's profile solves 4
of 4, `small-fast` at fast-750's takes more, shorter calls and its agent exits 1 on task
t4. Replies are short (about 130 and 30 tokens) so it runs in seconds; each arm is priced
at its own model's price entry. The failed run is recorded as failed, and the
report answers as a model comparison, never as one model at two speeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from looplab.report.build import build_model_for
from looplab.traces.io import read_trace

from .test_byo_bottom_lines import BYO

TASKS = ("lookup/t1", "lookup/t2", "lookup/t3", "lookup/t4")
"""One task set (`lookup`), four tasks: the part before `/` is the set runs pair within."""
ARMS = {
    # model: (profile, overrides): the preset, priced at the model's own price entry
    "big-slow": ("slow-80", ["price=openai-gpt-5.4-standard"]),
    "small-fast": ("fast-750", ["price=cerebras-gpt-oss-120b"]),
}


def _looplab(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m looplab ARGS` in `cwd`, its output captured."""
    command = [sys.executable, "-m", "looplab", "--no-log-file", *args]
    env = {**os.environ, "COLUMNS": "1000"}  # one printed line per bottom line
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=180, env=env)


def _wrap(tmp_path: Path, upstream: str, model: str, task: str) -> int:
    """One wrapped run of the agent on `task` with `model`; the wrap's exit code."""
    profile, overrides = ARMS[model]
    sets = [f for o in overrides for f in ("--profile-set", o)]
    done = _looplab(
        tmp_path, "wrap", "-p", profile, *sets, "--upstream", upstream, "--agent", "my-agent",
        "--task", task, "-o", "runs", "--", sys.executable, str(BYO / "agent_models.py"),
        model, task,
    )  # fmt: skip
    assert "trace:" in done.stderr, done.stderr[-2000:]
    return done.returncode


@pytest.fixture
def two_models(tmp_path: Path, byo_upstream: str) -> Path:
    """The eight wrapped runs (two models x four tasks) in `runs/`."""
    jobs = [(model, task) for model in ARMS for task in TASKS]
    with ThreadPoolExecutor(max_workers=4) as pool:
        codes = list(pool.map(lambda job: _wrap(tmp_path, byo_upstream, *job), jobs))
    assert codes == [0, 0, 0, 0, 0, 0, 0, 1]  # small-fast's agent exits 1 on t4
    return tmp_path / "runs"


@pytest.mark.slow
def test_two_models_are_a_model_comparison_with_success(two_models: Path) -> None:
    """The failed run is recorded as failed (exit code 1, verdict by exit code) with its
    model; the report's bottom line is a model comparison (each model's solved-of, time,
    $ a task and per solved task, under the user's deadline), never a decode-rate headline;
    the success view pairs the tasks and counts the failed run's money."""
    traces = [read_trace(p) for p in sorted(two_models.glob("*.jsonl"))]
    failed = [t for t in traces if t.end is not None and t.end.success is False]
    assert [(t.header.task, t.header.model) for t in failed] == [("lookup/t4", "small-fast")]
    assert failed[0].end is not None and failed[0].end.exit_code == 1
    assert failed[0].end.verdict_by == "exit code"
    assert {t.header.identity.model for t in traces if t.header.identity} == set(ARMS)
    report = _looplab(two_models.parent, "report", "runs", "--deadline", "2m", "-o", "r.html")
    assert report.returncode == 0, report.stderr[-2000:]
    said = " ".join(report.stdout.split())  # the console wraps long lines
    model, _ = build_model_for([two_models], deadline_s=120.0)
    (bottom,) = model.bottom_lines
    line = bottom.text
    print(line)  # the notes quote it
    assert f"Bottom line: {line}" in said
    assert "success per arm, on paired tasks (your 2-minute deadline)" in said
    assert line.startswith("For my-agent on lookup (wall clock): two models, compared as models")
    assert bottom.model_comparison and (bottom.slow_model, bottom.fast_model) == tuple(ARMS)
    assert model.success is not None
    arms = {a.model: a for a in model.success.arms}
    small, big = arms["small-fast"], arms["big-slow"]
    assert f"small-fast ({small.profile}) solves 3 of 4 in" in line
    assert f"big-slow ({big.profile}) 4 of 4 in" in line and "per solved task" in line
    assert "under your 2-minute deadline 75% vs 100%" in line
    for wrong in ("faster decode", "tok/s", "finishes 100%", "a task takes"):
        assert wrong not in line
    assert "faster decode" not in model.sentence and "Two models" in model.sentence
    assert model.claim is None or "no runs of yours" in model.claim.sentence
    assert (small.solved, small.failed, big.solved, big.failed) == (3, 1, 4, 0)
    assert small.rate == 0.75 and big.rate == 1.0 and small.interval is not None
    assert small.cost_per_task is not None and small.cost_per_solved is not None
    assert small.cost_per_solved == pytest.approx(small.cost_per_task * 4 / 3)
    assert big.cost_per_task is not None and big.cost_per_task > 5 * small.cost_per_task
    assert small.under_deadline == 0.75 and big.under_deadline == 1.0
    assert small.time_to_solved_s is not None and big.time_to_solved_s is not None
    assert small.task_s < big.task_s  # 750 vs 80 tok/s: the small model's attempts are faster
    data = json.loads(_looplab(two_models.parent, "report", "runs", "--format", "json",
                               "-o", "-", "--deadline", "90s").stdout)  # fmt: skip
    assert data["success"]["deadline_s"] == 90.0 and data["success"]["deadline_yours"]
