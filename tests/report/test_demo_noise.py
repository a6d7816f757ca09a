"""Issue 45 item 7: `make demo`'s report says only true things about its inputs: no
"Unlike inputs" box when each comparison group's profiles ran the same cells (task sets
differing BETWEEN groups is by design), and the corpus under-cap curves are told apart by
colour."""

from __future__ import annotations

from looplab.report.build import assign_groups
from looplab.report.data.records import RunRecord
from looplab.report.render.money import render_money
from looplab.report.render.tables import comparability_banner
from looplab.report.views.report_model import FIXED_COLORS, build_model
from looplab.traces.identity import Clock
from tests.invariants.flat import RunSpec, flat_run


def _two_sets() -> list[RunRecord]:
    records = []
    for task in ("coding/a", "workload/mini-swe-agent-deepseek"):
        clock: Clock = "virtual" if task.startswith("workload") else "wall"
        for profile, model_s in (("slow-80", 3.0), ("fast-750", 1.0)):
            spec = RunSpec(agent="agent", task=task, profile=profile, clock=clock)
            records.append(flat_run(RunSpec(**{**spec.__dict__, "model_s": model_s})))
    assign_groups(records)
    return records


def test_no_unlike_inputs_box_when_each_group_is_alike() -> None:
    """Two comparison groups (other task set, other clock), each with both profiles on the
    same cells: nothing to warn about, no "no headline figure" under computed lines."""
    model = build_model(_two_sets(), "noise", ["flat"])
    assert len(model.bottom_lines) == 2 and all(b.speedup for b in model.bottom_lines)
    assert model.comparability is not None and model.comparability.alike
    assert comparability_banner(model) == ""


def test_unlike_profiles_within_a_group_are_still_flagged() -> None:
    """Within one group, a task only one profile ran is named, with the group's label."""
    records = _two_sets()
    records.append(flat_run(RunSpec(agent="agent", task="coding/b", profile="slow-80")))
    assign_groups(records)
    model = build_model(records, "noise", ["flat"])
    banner = comparability_banner(model)
    assert "Unlike inputs" in banner and "agent on coding (wall clock): Different task" in banner
    assert "no headline figure is computed" not in banner


def test_corpus_cap_curves_are_drawn_in_the_pairs_colours() -> None:
    """The corpus re-timed at slow-80 and fast-750: each curve its fixed colour, not grey."""
    html = render_money(build_model(_two_sets(), "noise", ["flat"]))
    chart = html[html.index('data-chart="caps-corpus"') :]
    assert FIXED_COLORS["slow-80"] in chart and FIXED_COLORS["fast-750"] in chart
