"""Claims with success: published per-task outcomes judged per solved task."""

from __future__ import annotations

import pytest

from looplab.claims.check import check_claim
from looplab.claims.model import ClaimEntry, PublishedArm, get_claim
from looplab.claims.outcomes import published_choice
from looplab.errors import ConfigError


def test_codex_vs_claude_per_solved_task_is_slower_than_the_per_task_ratio() -> None:
    """(542.6 / 0.640) / (135.6 / 0.574) = 3.59x per solved task against the 4.0x per
    task the leaderboard shows: slower than claimed."""
    check = check_claim(get_claim("bestcode-codex-vs-claude"))
    expected = (542.6 / 0.640) / (135.6 / 0.574)
    assert check.prediction == pytest.approx(expected, rel=1e-9)
    assert check.verdict == "slower than claimed"
    assert "$0.220 per solved task" in check.evidence.what


def test_grok_vs_claude_per_solved_task() -> None:
    """Grok Code Fast 1 at 50.6%: 1.68x per solved task against 2.12x per task."""
    check = check_claim(get_claim("bestcode-grok-vs-claude"))
    assert check.prediction == pytest.approx((542.6 / 0.640) / (256.1 / 0.506), rel=1e-9)
    assert check.verdict == "slower than claimed"


def test_untimed_arms_are_not_testable_but_priced_per_solved_task() -> None:
    """Composer 2.5 Fast vs Composer 2.5: no time published, so no verdict; the evidence
    still gives cost per solved task ($0.700 vs $0.111)."""
    check = check_claim(get_claim("composer-fast"))
    assert check.prediction is None
    assert check.verdict.startswith("not testable yet: no time per task published")
    assert "$0.700 per solved task" in check.evidence.what
    assert "$0.111 per solved task" in check.evidence.what


def test_a_then_b_with_independent_tries() -> None:
    """A (50%, 10 s) then B (100%, 40 s): 10 + 0.5 x 40 = 30 s a task, all solved; the
    time per solved task of one arm does not depend on the tries (t / p)."""
    arms = [
        PublishedArm(name="a", success=0.5, time_s=10, cost_usd=1),
        PublishedArm(name="b", success=1.0, time_s=40, cost_usd=2),
    ]
    read = published_choice(arms, tries=3)
    row = read.choice.row("A then B")
    assert row.success == 1.0
    assert row.time_s == pytest.approx(30.0) and row.cost_usd == pytest.approx(2.0)
    assert read.choice.row("A x 3").time_per_solved_s == pytest.approx(20.0)
    assert read.choice.row("A only").time_per_solved_s == pytest.approx(20.0)


def test_three_arms_is_a_config_error_naming_the_field() -> None:
    """`test.arms` must hold exactly two arms."""
    entry = get_claim("bestcode-codex-vs-claude")
    plan = entry.test.model_copy(update={"arms": entry.test.arms * 2})
    bad = ClaimEntry.model_validate(entry.model_dump() | {"test": plan.model_dump()})
    with pytest.raises(ConfigError, match=r"test\.arms"):
        check_claim(bad)
