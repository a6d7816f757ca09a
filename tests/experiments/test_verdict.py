"""No confident number from a broken run: speedups over runs that are not unsolved, paired by
task, saying what they rest on; a broken environment is named, and `looplab run` fails."""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.experiments.summaries.verdict import reference_verdict
from looplab.report.data.records import RunRecord
from looplab.report.views.report_model import headline, headline_sentence
from looplab.traces.io import TraceWriter
from looplab.traces.schema import RunEndEvent, TraceHeader


def _record(group: str, task: str, seconds: float, success: bool | None) -> RunRecord:
    return RunRecord(
        run_id=f"{group}-{task}-{seconds}", input_name="x", experiment="e", profile=group,
        decode_tps=80.0 if group == "slow" else 750.0, profile_spec=None, task=task,
        family=None, size=None, agent="coding", source="looplab", clock="wall",
        complete=True, success=success, end_reason="finish", steps=3, task_s=seconds,
        model_s=seconds * 0.8, tool_s=seconds * 0.2, overhead_s=0.0, ttft_s=None,
        decode_s=None, reasoning_s=None, sandbox_start_s=None, step_ends=[seconds], ttfts=[],
        decodes=[],
        tool_times=[], bars=[], group=group,
    )  # fmt: skip


def test_speedup_pairs_solved_runs_by_task_and_says_so() -> None:
    """Unsolved runs are left out, tasks paired; the sentence counts tasks, runs, unsolved."""
    records = [
        _record("slow", "a", 30.0, True), _record("fast", "a", 10.0, True),
        _record("slow", "b", 40.0, True), _record("fast", "b", 1.0, False),  # broken: left out
        _record("slow", "c", 50.0, False), _record("fast", "c", 2.0, True),
    ]  # fmt: skip
    groups = headline(records)
    fast = groups[-1]
    assert (fast.paired_tasks, fast.paired_runs, fast.unsolved) == (1, 1, 1)
    assert fast.speedup == 3.0  # task a only: 30 s / 10 s
    sentence = headline_sentence(groups)
    assert "3.0x faster tasks" in sentence
    assert "over 1 task (1 + 1 runs; 2 unsolved runs left out)" in sentence


def test_no_paired_task_gives_no_number() -> None:
    """When nothing pairs up (every fast run unsolved), there is no speedup at all."""
    records = [_record("slow", "a", 30.0, True), _record("fast", "a", 3.0, False)]
    groups = headline(records)
    assert math.isnan(groups[-1].speedup)
    assert headline_sentence(groups).startswith("No speedup: no task has usable runs")


def _trace(directory: Path, name: str, *, success: bool, end_reason: str) -> None:
    header = TraceHeader(
        run_id=name, created=datetime(2026, 12, 1, tzinfo=UTC), task="coding/x",
        model="looplab-scripted", backend={"kind": "simulated", "name": "b"},
        cell={"backend": "b"},
    )  # fmt: skip
    with TraceWriter(directory / f"{name}.jsonl", header) as writer:
        writer.write(
            RunEndEvent(
                run_id=name,
                start=0,
                end=1,
                end_reason=end_reason,
                steps=2,
                success=success,
                check_output="E   ModuleNotFoundError: No module named 'pytest'",
            )
        )


def test_verdict_tells_a_broken_environment_from_a_short_budget(tmp_path: Path) -> None:
    """A scripted run that finished but failed its check is a broken environment; one cut by
    its step budget is only listed."""
    _trace(tmp_path, "ok", success=True, end_reason="finish")
    _trace(tmp_path, "budget", success=False, end_reason="step_limit")
    assert reference_verdict(tmp_path).ok
    _trace(tmp_path, "broken", success=False, end_reason="finish")
    verdict = reference_verdict(tmp_path)
    assert not verdict.ok
    assert (verdict.reference_runs, len(verdict.broken), len(verdict.cut_short)) == (3, 1, 1)
    assert "ENVIRONMENT BROKEN: 1 of 3" in verdict.message
    assert "No module named 'pytest'" in verdict.message


def test_a_run_whose_sandbox_cannot_test_is_flagged(
    tmp_path: Path, small_config: dict[str, Any]
) -> None:
    """End to end: the host's python3 without pytest makes the reference runs fail."""
    small_config["backends"] = small_config["backends"][1:]
    small_config["sandbox"] = {"kind": "local", "local_python": "system"}
    small_config["clock"] = "virtual"
    runner = ExperimentRunner(validate_model(ExperimentConfig, small_config))
    runner.prepare_directory(fresh=True)
    result = asyncio.run(runner.run())
    verdict = reference_verdict(result.directory / "traces")
    assert verdict.ok == bool(result.outcomes[0].success)
    if not verdict.ok:
        assert verdict.broken[0].task == "coding/fix-pager"
