"""Success in every answer (issue 44): a failed or crashed run never counts as finished or
feeds a speedup, unknown is said, two models are never headlined as one model at two
speeds, the user's deadline wins, and the success measures (Wilson interval, $ per solved
task, expected time to a solved task with retries, AUC, repetitions) are what they say.
Over real traces of `runs_root`'s `quick` experiment (virtual clock, bundled checks),
their records changed where a rule needs it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from looplab.report.build import assign_groups, build_model_for, load_records
from looplab.report.data.pairing import claim_groups
from looplab.report.data.records import RunRecord
from looplab.report.views.bottom_line import bottom_lines
from looplab.report.views.report_model import build_model, headline
from looplab.report.views.success import RETRIES, arm_success, success_view
from looplab.stats.durations import parse_duration
from looplab.stats.proportions import wilson


def _records(runs_root: Path) -> list[RunRecord]:
    records = load_records([runs_root / "quick"])
    assign_groups(records)
    return records


def test_crashed_runs_feed_no_speedup_and_never_finish(runs_root: Path) -> None:
    """Every run a wrapped agent that died (exit 1, no verdict): no speedup, no "finishes
    100% instead of 100%", no headline figure (the old code gave all three)."""
    records = _records(runs_root)
    for record in records:
        record.success, record.exit_code, record.end_reason = None, 1, "exit"
    (line,) = bottom_lines(records)
    assert line.speedup is None and "no task has usable (not failed) runs" in line.text
    assert "100%" not in line.text
    sentence = build_model(records, "t", ["quick"]).sentence
    assert sentence.startswith("No speedup") and "6 of 6 runs unsolved" in sentence
    fast = headline(records)[-1]
    assert fast.paired_tasks == 0 and fast.unsolved == 3


def test_one_failed_run_is_left_out_and_said(runs_root: Path) -> None:
    """A fast run whose check failed is left out of the time figure (said) and counted
    unsolved in success and under the cap."""
    records = _records(runs_root)
    failed = next(r for r in records if r.profile == "fast-750")
    failed.success = False
    (line,) = bottom_lines(records, deadline_s=600.0)
    assert "1 run failed, left out" in line.text
    assert "solves 2 of 3 instead of 3 of 3" in line.text
    assert "per solved task instead of" in line.text and "every run's cost counted" in line.text
    assert "under your 10-minute deadline solves 67% instead of 100%" in line.text


def test_unknown_outcome_is_said_never_solved(runs_root: Path) -> None:
    """Runs without a verdict (imported sessions): the time figure says so, success under
    the cap is unknown (never "0% instead of 0%"), and no arm has a success rate."""
    records = _records(runs_root)
    for record in records:
        record.success = None
    (line,) = bottom_lines(records, deadline_s=120.0)
    assert line.speedup is not None and "6 of 6 runs of unknown outcome" in line.text
    assert "under your 2-minute deadline success is unknown" in line.text
    assert "0% instead of 0%" not in line.text and "solves" not in line.text
    view = success_view(records, 120.0)
    assert all(a.rate is None and a.under_deadline is None for a in view.arms)


def test_two_models_are_never_headlined_as_one_model_at_two_speeds(runs_root: Path) -> None:
    """The fast arm on another model: the bottom line is a model comparison, the headline
    sentence never says "faster decode", and the claim check leaves the pair out."""
    records = _records(runs_root)
    for record in records:
        record.model = "small-fast" if record.profile == "fast-750" else "big-slow"
    (line,) = bottom_lines(records, deadline_s=120.0)
    assert line.model_comparison
    assert "two models, compared as models (not one model at two speeds)" in line.text
    assert "small-fast (fast-750) solves 3 of 3 in" in line.text
    assert "big-slow (slow-80) 3 of 3 in" in line.text
    assert "tok/s" not in line.text and "a task takes" not in line.text
    model = build_model(records, "t", ["quick"], deadline_s=120.0)
    assert "faster decode" not in model.sentence and model.sentence.startswith("Two models")
    by_group = {g: [r for r in records if r.group == g] for g in ("slow-80", "fast-750")}
    assert claim_groups(by_group, ["slow-80", "fast-750"]) == ({}, [])
    for record in records:  # no verdicts: said per model, never "0% vs 0%"
        record.success = None
    (line,) = bottom_lines(records, deadline_s=120.0)
    assert "small-fast (fast-750) (success unknown) in" in line.text
    assert "under your 2-minute deadline success is unknown" in line.text
    for record in records:  # one model again: the speed comparison, as before
        record.model = "same"
    (line,) = bottom_lines(records)
    assert not line.model_comparison and "at 750 tok/s (fast-750) a task takes" in line.text


def test_the_users_deadline_wins_over_the_picked_cap(runs_root: Path) -> None:
    """`deadline_s` replaces the cap picked from the slow median, and says it is yours."""
    records = _records(runs_root)
    (picked,) = bottom_lines(records)
    (yours,) = bottom_lines(records, deadline_s=45.0)
    assert not picked.deadline_yours and f"a {picked.cap_minutes:g}-minute cap" in picked.text
    assert yours.deadline_yours and yours.cap_minutes == 0.75
    assert "under your 0.75-minute deadline solves" in yours.text


def test_success_measures(runs_root: Path) -> None:
    """Rate and Wilson interval over runs with a verdict; $ per solved task = all runs' $
    over the solved ones; expected time to a solved task with retries counts failed tries
    (a task never solved here never is); under-deadline share and AUC by their formulas;
    repetitions' always / mean / ever."""
    records = [r for r in _records(runs_root) if r.profile == "fast-750"]
    key = next(iter(success_view(records, None).arms)).key
    records[0].success = False
    arm = arm_success(key, "fast-750", records, deadline_s=60.0)
    assert (arm.solved, arm.failed, arm.unknown, arm.rate) == (2, 1, 0, 2 / 3)
    assert arm.interval == wilson(2, 3)
    assert arm.cost_per_task is not None and arm.cost_per_solved is not None
    assert arm.cost_per_solved == pytest.approx(arm.cost_per_task * 3 / 2)
    wins = [r.task_s for r in records[1:]]
    expected = (sum(wins) + RETRIES * records[0].task_s) / 2
    assert arm.time_to_solved_s == pytest.approx(expected)
    assert arm.under_deadline == pytest.approx(2 / 3)
    assert arm.auc == pytest.approx(sum(1 - t / 60.0 for t in wins) / 3)
    assert arm.always is None  # one run a task
    again = [*records, *records[1:]]  # a second (solved) run of two tasks
    repeated = arm_success(key, "fast-750", again, deadline_s=60.0)
    assert (repeated.always, repeated.mean, repeated.ever) == (1.0, 1.0, 1.0)


def test_wilson_interval() -> None:
    """Wilson 95%: 4 of 4 is 51%-100% (not a point), 0 trials None, bad counts refused."""
    low, high = wilson(4, 4) or (0.0, 0.0)
    assert low == pytest.approx(0.510, abs=1e-3) and high == 1.0
    assert wilson(0, 0) is None
    with pytest.raises(ValueError, match="outside"):
        wilson(5, 4)


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90.0), ("90s", 90.0), ("2m", 120.0), ("1.5h", 5400.0)]
)
def test_durations(text: str, seconds: float) -> None:
    """`--deadline` takes seconds, minutes or hours."""
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "-2m", "0", "2 days", "nan"])
def test_bad_durations_are_refused(text: str) -> None:
    """A duration that is not positive seconds, minutes or hours names the forms allowed."""
    with pytest.raises(ValueError, match="give seconds"):
        parse_duration(text)


def test_the_configs_deadline_reaches_the_report(runs_root: Path, tmp_path: Path) -> None:
    """An experiment's `deadline_s` (its stored config.json) is the report's deadline
    unless `--deadline` gives another."""
    copy = tmp_path / "quick"
    shutil.copytree(runs_root / "quick", copy)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "deadline_s": 120}))
    model, _ = build_model_for([copy])
    assert "under your 2-minute deadline" in model.bottom_lines[0].text
    model, _ = build_model_for([copy], deadline_s=30.0)
    assert "under your 0.5-minute deadline" in model.bottom_lines[0].text
    assert model.success is not None and model.success.deadline_s == 30.0


def test_runs_summary_prints_success_per_arm(
    runs_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`looplab run`'s summary: the success table per arm (solved, rate with its interval,
    $ per solved task, time to a solved task) before the bottom lines."""
    from looplab.experiments.summaries.finish import _print_bottom_lines

    _print_bottom_lines(_records(runs_root), runs_root / "quick")
    printed = " ".join(capsys.readouterr().out.split())
    assert "success per arm, on paired tasks" in printed and "$ per solved task" in printed
    assert "3/3" in printed and "100% (44%-100%)" in printed
    assert "Bottom line For coding on coding (virtual clock)" in printed
