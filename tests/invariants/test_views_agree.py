"""Invariants across views (issue 45 item 7), over many drawn flat trace sets
(`sets.trace_sets`: several agents, task sets, clocks, profiles, prices, unsolved runs):

1. money rows stay within one comparison group, and their seconds and dollars are the
   bottom line's own (one figure per (group, profile));
2. a break-even is positive or absent; a faster option that is no dearer "dominates";
3. one CI rule: an interval exactly where n reaches `MIN_PAIRED_N`, in the bottom line
   and the claim panel alike, said in the same words;
4. unsolved runs never feed a speedup, a waiting row or an under-cap share (their times
   scaled 100x move nothing);
5. the console line, the JSON and the HTML carry the same figures.

Checks 1-4 run over `CHEAP` examples on the views alone; check 5 builds the whole report
(the claim panel re-times the corpus, about a second each) over `FULL` examples.
Derandomized, so `make test` sees the same cases every time; under 30 s together.
"""

from __future__ import annotations

import html as html_lib
import json

import pytest
from hypothesis import HealthCheck, given, settings

from looplab.report.data.exports import report_json
from looplab.report.data.pairing import by_profile, comparison_groups, comparison_key
from looplab.report.data.records import RunRecord
from looplab.report.render.money import render_money
from looplab.report.render.page import render_page
from looplab.report.views.bottom_line import BottomLine, bottom_lines
from looplab.report.views.cost import cost_figure
from looplab.report.views.money import money_view
from looplab.report.views.report_model import build_model
from looplab.report.views.speedup import ci_words, paired_speedup
from looplab.stats.intervals import MIN_PAIRED_N
from tests.invariants.sets import TraceSet, build, grouped, trace_sets

CHEAP = 40
"""Examples of the view-level checks."""
FULL = 3
"""Examples of the whole-report check."""

_SETTINGS = {
    "deadline": None,
    "derandomize": True,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


def _check_money_rows(records: list[RunRecord]) -> None:
    by_group, order = grouped(records)
    money = money_view(by_group, order)
    assert money is not None
    keys = {g: comparison_key(runs[0]) for g, runs in by_group.items()}
    lines = {line.key: line for line in bottom_lines(records)}
    for row in money.waiting:
        assert keys[row.group] == keys[row.reference], (row.group, row.reference)
        assert row.comparison == keys[row.group].label
        line = lines[keys[row.group]]
        profiles = list(by_profile(comparison_groups(records)[keys[row.group]]))
        if [row.reference, row.group] == [profiles[0], profiles[-1]] and line.speedup:
            assert line.slow_s is not None and line.fast_s is not None
            assert row.saved_s_per_task == pytest.approx(line.slow_s - line.fast_s)
            if line.cost_slow is not None and line.cost_fast is not None:
                assert row.extra_usd_per_task == pytest.approx(line.cost_fast - line.cost_slow)
        if row.usd_per_hour_saved is not None:
            assert row.usd_per_hour_saved > 0
            assert row.extra_usd_per_task is not None and row.extra_usd_per_task > 0
            assert row.saved_s_per_task > 0
        extra = row.extra_usd_per_task
        if extra is not None and extra <= 0 < row.saved_s_per_task:
            assert row.verdict.startswith("dominates"), row
    for point in money.points:
        expected = cost_figure([r for r in by_group[point.group] if r.trace is not None])
        assert point.cost_usd == expected.usd and (point.cost_usd is None) == bool(point.unpriced)


def _check_one_ci_rule(records: list[RunRecord]) -> None:
    for line in bottom_lines(records):
        if line.speedup is None:
            continue
        if line.paired_tasks < MIN_PAIRED_N:
            assert line.ci is None
        assert ci_words(line.paired_tasks, line.ci) in line.text
        runs = comparison_groups(records)[line.key]
        profiles = list(by_profile(runs).values())
        again = paired_speedup(profiles[0], profiles[-1])
        assert (again.speedup, again.ci, again.n) == (line.speedup, line.ci, line.paired_tasks)


def line_shares(line: BottomLine) -> tuple[float | None, float | None]:
    """The line's under-cap shares (slow, fast)."""
    return line.finish_slow, line.finish_fast


def _figures(records: list[RunRecord]) -> list[tuple[object, ...]]:
    """What must not move when unsolved runs' times do."""
    by_group, order = grouped(records)
    money = money_view(by_group, order)
    rows = [(w.group, round(w.saved_s_per_task, 9)) for w in (money.waiting if money else [])]
    lines = [
        (line.label, line.speedup, line.ci, line.slow_s, line.fast_s, *line_shares(line))
        for line in bottom_lines(records)
    ]
    return [*lines, *rows]


@settings(max_examples=CHEAP, **_SETTINGS)  # type: ignore[arg-type]  # hypothesis kwargs
@given(trace_sets())
def test_money_ci_and_unsolved_invariants(trace_set: TraceSet) -> None:
    """Checks 1-4 of the module doc over many drawn trace sets."""
    records = build(trace_set)
    _check_money_rows(records)
    _check_one_ci_rule(records)
    assert _figures(records) == _figures(build(trace_set, scale_unsolved=100.0))


@settings(max_examples=FULL, **_SETTINGS)  # type: ignore[arg-type]  # hypothesis kwargs
@given(trace_sets())
def test_console_json_and_html_carry_the_same_figures(trace_set: TraceSet) -> None:
    """Check 5: every bottom line's text is in the JSON sentence and the page; every
    money row of the model is the JSON's and is in the HTML's waiting table."""
    records = build(trace_set)
    model = build_model(records, "invariants", ["drawn"])
    data = json.loads(json.dumps(report_json(model)))
    page = html_lib.unescape(render_page(model))
    groups = {g["label"]: g for g in data["groups"]}
    for line in model.bottom_lines:
        assert line.text in page
        if len(model.bottom_lines) > 1:
            assert line.text in data["sentence"]
        if line.speedup is not None:  # the per-profile table's figure for the fast profile
            fast = by_profile(comparison_groups(records)[line.key])
            assert groups[list(fast)[-1]]["speedup"] == pytest.approx(line.speedup)
    if model.money is not None:
        assert [(w["group"], w["reference"], w["verdict"]) for w in data["money"]["waiting"]] == [
            (w.group, w.reference, w.verdict) for w in model.money.waiting
        ]
        section = html_lib.unescape(render_money(model))
        assert "$-" not in section
        for row in model.money.waiting:
            assert row.verdict in section
    assert model.claim is not None
    for claim_row in model.claim.rows:
        if claim_row.key.startswith("live:") and claim_row.speedup is not None:
            assert (claim_row.ci is None) or claim_row.n >= MIN_PAIRED_N
            if claim_row.ci is None and claim_row.n < MIN_PAIRED_N:
                words = f"n={claim_row.n}, under the {MIN_PAIRED_N} a 95% interval needs"
                assert words in claim_row.sentence
