"""Issue 45: money rows stay within one comparison group, a faster-and-cheaper option
dominates (never a negative break-even), and the bottom line and the claim panel follow
one CI rule. Built from flat in-memory traces shaped like `make demo`'s two workloads."""

from __future__ import annotations

import json

import pytest

from looplab.report.build import assign_groups
from looplab.report.data.exports import report_json
from looplab.report.data.pairing import comparison_key
from looplab.report.data.records import RunRecord
from looplab.report.render.money import render_money
from looplab.report.views.report_model import ReportModel, build_model
from tests.invariants.flat import RunSpec, flat_run

DEMO = {
    # task set: (slow-80 model s per step, fast-750 model s per step, tokens per call)
    "workload/mini-swe-agent-deepseek": (3.15, 1.17, 100),
    "workload/mini-swe-agent-deepseek-reasoning": (8.7, 1.76, 300),
}


def _demo_records() -> list[RunRecord]:
    """`make demo`'s workload part: two task sets (reasoning or not) at two profiles, three
    draws each, on the virtual clock."""
    records = []
    for task, (slow, fast, tokens) in DEMO.items():
        for rep in range(3):
            for profile, model_s in (("slow-80", slow), ("fast-750", fast)):
                spec = RunSpec(
                    agent="workload",
                    task=task,
                    profile=profile,
                    repetition=rep,
                    clock="virtual",
                    model_s=model_s * (1 + rep / 10),
                    steps=89,
                    completion_tokens=tokens,
                )
                records.append(flat_run(spec))
    return records


def _model(records: list[RunRecord]) -> ReportModel:
    assign_groups(records)
    return build_model(records, "pairs", ["flat"])


def test_money_rows_compare_a_task_set_only_with_itself() -> None:
    """Every price-of-waiting row pairs two profiles of ONE comparison group; its saved
    seconds and extra dollars are the bottom line's own figures; the JSON says the same."""
    records = _demo_records()
    model = _model(records)
    assert model.money is not None
    keys = {r.group: comparison_key(r) for r in records}
    rows = model.money.waiting
    assert len(rows) == 2
    for row in rows:
        assert keys[row.group] == keys[row.reference], (row.group, row.reference)
    lines = {line.label: line for line in model.bottom_lines}
    for row in rows:
        line = lines[row.comparison]
        assert line.slow_s is not None and line.fast_s is not None
        assert row.saved_s_per_task == pytest.approx(line.slow_s - line.fast_s)
        assert line.cost_fast is not None and line.cost_slow is not None
        assert row.extra_usd_per_task == pytest.approx(line.cost_fast - line.cost_slow)
    data = json.loads(json.dumps(report_json(model)))
    assert [(w["group"], w["reference"]) for w in data["money"]["waiting"]] == [
        (r.group, r.reference) for r in rows
    ]


def test_faster_and_cheaper_dominates_instead_of_a_negative_break_even() -> None:
    """A fast profile priced below the slow one: no break-even figure, the row says the
    faster option dominates, and the page never prints a negative dollar amount."""
    records = []
    for task in ("coding/a", "coding/b"):
        for profile, model_s, price in (
            ("slow-80", 4.0, "openai-gpt-5.4-codex-fast"),
            ("fast-750", 0.5, "openai-gpt-5.4-standard"),
        ):
            spec = RunSpec(agent="coding", task=task, profile=profile, model_s=model_s)
            records.append(flat_run(RunSpec(**{**spec.__dict__, "price": price})))
    model = _model(records)
    assert model.money is not None
    (row,) = model.money.waiting
    assert row.extra_usd_per_task is not None and row.extra_usd_per_task < 0
    assert row.saved_s_per_task > 0
    assert row.usd_per_hour_saved is None
    assert row.verdict.startswith("dominates: cheaper")
    html = render_money(model)
    assert "dominates: cheaper" in html and "$-" not in html


def test_bottom_line_and_claim_panel_follow_one_ci_rule() -> None:
    """n=4 tasks: neither the bottom line nor the claim panel gives an interval, and both
    say so in the same words; n=8: both give the same interval."""
    for tasks, expect_ci in ((4, False), (8, True)):
        records = []
        for i in range(tasks):
            for profile, model_s in (("slow-80", 4.0 + i / 3), ("fast-750", 1.0 + i / 5)):
                spec = RunSpec(agent="coding", task=f"coding/t{i}", profile=profile)
                records.append(flat_run(RunSpec(**{**spec.__dict__, "model_s": model_s})))
        model = _model(records)
        (line,) = model.bottom_lines
        assert model.claim is not None
        (row,) = [r for r in model.claim.rows if r.key == "live:bundled"]
        assert row.n == line.paired_tasks == tasks
        assert (line.ci is not None) is expect_ci
        assert row.ci == line.ci
        if not expect_ci:
            words = f"n={tasks}, under the 6 a 95% interval needs: no CI"
            assert words in line.text
