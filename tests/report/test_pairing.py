"""The pairing rules (`report/data/pairing.py`) and the bottom line, over real traces of a
real two-profile experiment (`runs_root`'s `quick`, virtual clock), retagged as another
agent or another clock where a rule needs it."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from looplab.analysis.replay import replay_virtual
from looplab.latency.presets import resolve_profile
from looplab.report.build import build_model_for, load_records
from looplab.report.data.pairing import comparison_groups, pooled_key
from looplab.report.views.bottom_line import CAP_LADDER_MIN, bottom_lines, cap_minutes
from looplab.traces.identity import identity_of
from looplab.traces.io import read_trace, write_trace


def _retag(directory: Path, **identity: object) -> None:
    """Rewrite every trace of `directory` with its identity's fields changed."""
    for path in sorted((directory / "traces").glob("*.jsonl")):
        trace = read_trace(path)
        header = trace.header
        new = identity_of(header).model_copy(update=identity)
        run_id = f"{header.run_id}-{new.agent}-{new.clock}"
        update = {"identity": new, "run_id": run_id, "agent": new.agent, "clock": new.clock}
        events = [e.model_copy(update={"run_id": run_id}) for e in trace.events]
        write_trace(path, header.model_copy(update=update), events)


@pytest.fixture
def two_agents(runs_root: Path, tmp_path: Path) -> list[Path]:
    """`quick` as agent `coding`, and a copy of it as agent `other`."""
    other = tmp_path / "other"
    shutil.copytree(runs_root / "quick", other)
    _retag(other, agent="other")
    return [runs_root / "quick", other]


def test_two_agents_are_never_paired(two_agents: list[Path]) -> None:
    """Two agents at the same two profiles: each gets its own bottom line and its own
    reference; no group's speedup is computed against the other agent's runs."""
    model, records = build_model_for(two_agents)
    assert [line.key.agent for line in model.bottom_lines] == ["coding", "other"]
    for line in model.bottom_lines:
        assert line.slow == "slow-80" and line.fast == "fast-750"
        assert line.text.startswith(f"For {line.key.agent} on coding (virtual clock): at 750")
    by_label = {g.label: g for g in model.groups}
    assert set(by_label) == {
        "coding · slow-80",
        "coding · fast-750",
        "other · slow-80",
        "other · fast-750",
    }
    assert by_label["coding · slow-80"].reference and by_label["other · slow-80"].reference
    assert by_label["other · fast-750"].comparison == "other on coding (virtual clock)"
    assert model.sentence.startswith("2 comparison groups, never pooled")
    with pytest.raises(ValueError, match="different comparison groups"):
        pooled_key(records)


def test_two_agents_claim_panel_counts_the_users_runs(two_agents: list[Path]) -> None:
    """The claim check sees each agent's own slow and fast runs ("your runs"), never
    one agent's slow runs against the other's fast ones."""
    model, _ = build_model_for(two_agents)
    assert model.claim is not None
    assert "no runs of yours to compare" not in model.claim.sentence
    assert (model.claim.slow, model.claim.fast) == ("slow-80", "fast-750")


def test_wall_and_virtual_clocks_are_never_pooled(runs_root: Path, tmp_path: Path) -> None:
    """The same agent's runs on the wall clock and on the virtual clock: two comparison
    groups, two bottom lines, no number over both."""
    wall = tmp_path / "wall"
    shutil.copytree(runs_root / "quick", wall)
    _retag(wall, clock="wall")
    records = load_records([runs_root / "quick", wall])
    groups = comparison_groups(records)
    assert [k.clock for k in groups] == ["virtual", "wall"]
    assert all(len(runs) == 6 for runs in groups.values())
    lines = bottom_lines(records)
    assert [line.label for line in lines] == [
        "coding on coding (virtual clock)",
        "coding on coding (wall clock)",
    ]
    with pytest.raises(ValueError, match="different comparison groups"):
        pooled_key(records)


def test_task_sets_are_separate_groups(runs_root: Path, tmp_path: Path) -> None:
    """Another task set (a browser workload's, say) is its own group, never judged with
    the coding runs."""
    browser = tmp_path / "browser"
    shutil.copytree(runs_root / "quick", browser)
    _retag(browser, tasks="browser")
    lines = bottom_lines(load_records([runs_root / "quick", browser]))
    assert [line.key.tasks for line in lines] == ["browser", "coding"]


def test_bottom_line_gives_the_point_estimate_when_n_is_too_small(
    runs_root: Path, tmp_path: Path
) -> None:
    """One task per profile: too few for a CI, said in words, with the point estimate."""
    one = tmp_path / "one"
    (one / "traces").mkdir(parents=True)
    for path in (runs_root / "quick/traces").glob("*fix-pager*.jsonl"):
        shutil.copy(path, one / "traces" / path.name)
    (line,) = bottom_lines(load_records([one]))
    assert line.speedup is not None and line.speedup > 1.0 and line.ci is None
    assert "x, n=1, under the 6 a 95% interval needs: no CI)" in line.text
    assert f"({line.speedup:.2f}x" in line.text
    assert line.slow_s is not None and line.fast_s is not None
    assert f"takes {line.fast_s:.2f} s instead of {line.slow_s:.2f} s" in line.text
    assert line.dominant in {"model time", "tool time", "harness overhead"}


def test_one_profile_is_said_in_words_never_nan(runs_root: Path, tmp_path: Path) -> None:
    """A group with one profile says so; no NaN anywhere in the sentence."""
    only = tmp_path / "only"
    (only / "traces").mkdir(parents=True)
    for path in (runs_root / "quick/traces").glob("slow-80*.jsonl"):
        shutil.copy(path, only / "traces" / path.name)
    (line,) = bottom_lines(load_records([only]))
    assert "only one profile (slow-80: 3 runs" in line.text
    assert "nan" not in line.text.lower()
    model, _ = build_model_for([only])
    assert "nan" not in model.sentence.lower()


def test_money_and_cap_parts_come_from_the_runs(runs_root: Path) -> None:
    """Cost per task comes from each profile's price entry (fast-750's tier costs more
    per token) and the cap is the largest ladder value under the slow median; cleared parts
    are not rendered."""
    (line,) = bottom_lines(load_records([runs_root / "quick"]))
    assert line.cost_slow is not None and line.cost_fast is not None
    assert line.cost_fast > line.cost_slow > 0
    assert line.slow_s is not None and line.cap_minutes == cap_minutes(line.slow_s)
    assert 60 * line.cap_minutes < line.slow_s or line.cap_minutes == CAP_LADDER_MIN[0]
    assert line.finish_fast is not None and line.finish_slow is not None
    assert line.finish_fast >= line.finish_slow
    assert f"costs ${line.cost_fast:.4g} instead of ${line.cost_slow:.4g}" in line.text
    assert f"under a {line.cap_minutes:g}-minute cap solves" in line.text
    assert "solves 3 of 3 instead of 3 of 3" in line.text  # the bundled tasks' checks
    line.cost_slow = line.cost_fast = line.cap_minutes = None
    line.success_slow = line.success_fast = None
    assert "$" not in line.text and "cap" not in line.text


def test_replay_records_the_profile_it_ran_at(runs_root: Path, tmp_path: Path) -> None:
    """A virtual replay of a slow-80 run at fast-750 is labelled fast-750 (identity and
    cell), and the report pairs it with the slow-80 original."""
    source = next((runs_root / "quick/traces").glob("slow-80*.jsonl"))
    original = read_trace(source)
    replayed = replay_virtual(original, resolve_profile("fast-750"))
    identity = replayed.header.identity
    assert identity is not None and identity.profile == "fast-750"
    assert identity.decode_tps == 750 and identity.clock == "virtual"
    assert replayed.header.cell.backend == "fast-750"
    assert replayed.header.cell.replayed_from == "slow-80"
    # an older replay (no identity, cell.backend left at the original) reads tolerantly
    old = replayed.header.model_copy(update={"identity": None, "cell": original.header.cell})
    assert identity_of(old).profile == "fast-750"
    out = tmp_path / "replays"
    out.mkdir()
    write_trace(out / "orig.jsonl", original.header, original.events)
    write_trace(out / "replay.jsonl", replayed.header, replayed.events)
    (line,) = bottom_lines(load_records([out]))
    assert (line.slow, line.fast) == ("slow-80", "fast-750")
    assert line.speedup is not None and math.isfinite(line.speedup)
