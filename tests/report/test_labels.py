"""Issue 45 item 5: the claim panel names runs from their identity only: a replay of the
user's own upstream is not "simulated model on bundled tasks", an imported session is not
"bundled <uuid> tasks", and wrapped runs' `est.` is the proxy's, not an importer's."""

from __future__ import annotations

from looplab.report.build import assign_groups
from looplab.report.claims.labels import live_group, live_label
from looplab.report.render.tables import headline_table
from looplab.report.views.report_model import build_model
from tests.invariants.flat import RunSpec, flat_run


def test_a_replayed_wrapped_agent_is_its_own_model_on_its_own_tasks() -> None:
    """`looplab wrap --replay`: the row names the agent, its task set and its recorded
    replies; never "bundled" or "simulated"."""
    runs = [
        flat_run(
            RunSpec(
                agent="my-agent",
                task=f"app/t{i}",
                profile="slow-80",
                source="wrap",
                replies="recording",
            )
        )
        for i in range(3)
    ]
    group = live_group(runs[0])
    named = live_label(group, runs)
    assert group == "wrapped:my-agent" and named is not None
    label, what = named
    assert label == "my-agent on app tasks"
    assert "recorded replies" in what and "3 app" in what
    assert "bundled" not in what and "simulated" not in what


def test_an_imported_session_is_not_bundled() -> None:
    """An imported Claude Code session (task id a uuid): `imported claude-code runs`."""
    run = flat_run(
        RunSpec(
            agent="claude-code",
            task="7d3e9a10-5b1c-4c4e-9f00-1234567890ab",
            profile="slow-80",
            source="import:claude_code",
        )
    )
    named = live_label(live_group(run), [run])
    assert named is not None
    label, what = named
    assert label == "imported claude-code runs"
    assert "imported from claude_code" in what and "bundled" not in label + what


def test_wrapped_estimates_are_the_proxys() -> None:
    """The headline table's `est.` on wrapped runs says the wrap proxy estimated them."""
    records = []
    for profile, model_s in (("slow-80", 3.0), ("fast-750", 1.0)):
        record = flat_run(
            RunSpec(
                agent="my-agent",
                task="app/a",
                profile=profile,
                model_s=model_s,
                source="wrap",
                replies="recording",
            )
        )
        record.estimated.add("tool")
        records.append(record)
    assign_groups(records)
    html = headline_table(build_model(records, "labels", ["flat"]))
    assert "estimated by the wrap proxy" in html and "estimated by an importer" not in html
