"""Which to use: the policy table's expectations, Pareto set, deadline and break-even."""

from __future__ import annotations

import pytest

from looplab.analysis.choice import Outcome, break_even_rate, choose, policies, policy_name


def _run(task: str, time_s: float, solved: bool | None, cost: float = 0.01, **kw: float) -> Outcome:
    return Outcome(task=task, time_s=time_s, solved=solved, cost_usd=cost, **kw)  # type: ignore[arg-type]


FAST = [_run("t1", 10, True, 0.01), _run("t2", 20, False, 0.02)]
SLOW = [_run("t1", 50, True, 0.10), _run("t2", 60, True, 0.12)]


def test_single_arm_rows_are_means_over_tasks() -> None:
    """A only: mean time and cost per task, share solved, and per solved task the totals
    over the solved count (the failed task's time and money counted)."""
    choice = choose(FAST, SLOW, labels=("fast", "slow"), tries=2)
    a = choice.row("A only")
    assert (a.time_s, a.success) == (15.0, 0.5)
    assert a.cost_usd == pytest.approx(0.015)
    assert a.time_per_solved_s == 30.0
    assert a.cost_per_solved_usd == pytest.approx(0.03)
    b = choice.row("B only")
    assert (b.time_s, b.success, b.time_per_solved_s) == (55.0, 1.0, 55.0)


def test_a_then_b_pays_b_only_where_a_failed() -> None:
    """A then B: t1 costs A's 10 s (solved), t2 A's 20 s plus B's 60 s; all solved."""
    row = choose(FAST, SLOW, tries=2).row("A then B")
    assert row.time_s == pytest.approx((10 + 20 + 60) / 2)
    assert row.cost_usd == pytest.approx((0.01 + 0.02 + 0.12) / 2)
    assert row.success == 1.0
    assert row.time_per_solved_s == pytest.approx(45.0)


def test_one_run_per_task_retry_repeats_the_failure() -> None:
    """With one run per task a failed task stays failed on retry (p = 0): A x 3 solves
    what A solves, and its time counts the three failed tries of t2."""
    row = choose(FAST, SLOW, tries=3).row("A x 3")
    assert row.success == 0.5
    assert row.time_s == pytest.approx((10 + 3 * 20) / 2)


def test_retry_pays_where_runs_of_a_task_disagree() -> None:
    """Two runs of t1, one solved: p = 0.5, so two tries solve 75% and take 1.5 mean tries."""
    a = [_run("t1", 10, True), _run("t1", 30, False)]
    choice = choose(a, [_run("t1", 100, True)], tries=2)
    row = choice.row("A x 2")
    assert row.success == pytest.approx(0.75)
    assert row.time_s == pytest.approx(20 * 1.5)


def test_unknown_success_never_counts_as_solved() -> None:
    """A run with success None (not checked) is not solved: nothing per solved task."""
    a = [_run("t1", 5, None)]
    row = choose(a, [_run("t1", 9, True)], tries=1).row("A only")
    assert row.success == 0.0 and row.time_per_solved_s is None


def test_deadline_counts_only_tries_that_end_in_time() -> None:
    """Under a 40 s deadline: A solves t1 (10 s) and fails t2; A then B would need 80 s on
    t2, so only t1 is in time; B alone is never in time (50 and 60 s)."""
    choice = choose(FAST, SLOW, tries=2, deadline_s=40)
    assert choice.row("A only").under_deadline == 0.5
    assert choice.row("A then B").under_deadline == 0.5
    assert choice.row("B only").under_deadline == 0.0
    assert choose(FAST, SLOW, tries=2, deadline_s=90).row("A then B").under_deadline == 1.0


def test_pareto_set_drops_dominated_policies() -> None:
    """A then B (45 s, $0.075, all solved) beats B only and B then A on every count; A x 2
    repeats A's failure at more time and cost than A only: the front is A only, A then B."""
    choice = choose(FAST, SLOW, tries=2)
    assert {r.name for r in choice.rows if r.pareto} == {"A only", "A then B"}


def test_break_even_rate_equalises_time_to_a_solved_task() -> None:
    """Re-timed at the break-even rate, A's time per solved task equals B's."""
    a = [
        _run("t1", 40, True, decode_s=30, decode_tps=100),
        _run("t2", 40, False, decode_s=30, decode_tps=100),
    ]
    b = [_run("t1", 50, True), _run("t2", 50, True)]
    choice = choose(a, b, tries=1)
    rate = choice.break_even_tps
    assert rate is not None
    retimed = [_run(o.task, o.time_s - o.decode_s + o.decode_s * 100 / rate, o.solved) for o in a]
    again = choose(retimed, b, tries=1).row("A only")
    assert again.time_per_solved_s == pytest.approx(50.0)
    assert "above 200 tok/s" in choice.break_even_note


def test_break_even_none_when_floor_is_already_slower() -> None:
    """A's time without any decoding is above B's per solved task: no rate helps."""
    a = [_run("t1", 100, True, decode_s=10, decode_tps=100)]
    rate, note = break_even_rate(a, choose(a, [_run("t1", 20, True)]).row("B only"), 1)
    assert rate is None and "even with instant decoding" in note


def test_bad_input_is_a_clear_error() -> None:
    """No shared task, or tries out of range, raise ValueError naming the problem."""
    with pytest.raises(ValueError, match="no task was run by both"):
        choose([_run("x", 1, True)], [_run("y", 1, True)])
    with pytest.raises(ValueError, match=r"tries must be 1\.\.10"):
        choose(FAST, SLOW, tries=0)


def test_policy_names() -> None:
    """Policies are named from their tries, in the arms' own labels when given."""
    assert [n for n, _ in policies(3)][-2:] == ["A, then B x 2", "B, then A x 2"]
    assert policy_name(("A", "B"), {"A": "small", "B": "big"}) == "small then big"
    assert policy_name(("B", "B"), {"A": "small", "B": "big"}) == "big x 2"
