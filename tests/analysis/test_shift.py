"""Behaviour shift: per-run counts, the paired sign-flip test, shuffled labels show none."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from looplab.analysis.shift import Behaviour, behaviour_of, behaviour_shift
from looplab.stats.paired import sign_flip_p
from looplab.traces.io import Trace
from looplab.traces.schema import (
    Attempt,
    ModelCallEvent,
    RunEndEvent,
    ToolCallEvent,
    TraceHeader,
)


def _trace() -> Trace:
    """Three steps: a read, the same read again and a failing test run (one model retry),
    then the test run again and finish."""
    run = "r1"
    header = TraceHeader(run_id=run, created=datetime.now(UTC), task="coding/x")
    calls = [
        ModelCallEvent(run_id=run, step=i, start=i, end=i + 0.5, completion_tokens=100 + i)
        for i in range(3)
    ]
    calls[1] = calls[1].model_copy(
        update={"attempts": [Attempt(start=1.0, end=1.1, error="503", status=503)]}
    )

    def tool(step: int, at: float, name: str, args: str, **kw: object) -> ToolCallEvent:
        return ToolCallEvent(
            run_id=run, step=step, start=at, end=at + 0.1, name=name, arguments=args, **kw
        )

    tools = [
        tool(0, 0.6, "read_file", '{"path": "a.py"}', ok=True, output="x"),
        tool(1, 1.6, "read_file", '{"path": "a.py"}', ok=True, output="x"),
        tool(1, 1.7, "run_tests", "{}", ok=True, exit_code=1, output="1 FAILED"),
        tool(2, 2.6, "run_tests", "{}", ok=True, exit_code=0, output="1 passed"),
        tool(2, 2.8, "finish", "{}", ok=True),
    ]
    end = RunEndEvent(run_id=run, start=0, end=3, end_reason="finish", steps=3, success=True)
    return Trace(header=header, events=[*calls, *tools, end])


def test_behaviour_counts_one_run() -> None:
    """Steps, tool calls without finish, completion tokens, retries (a failed model
    attempt + a re-run of the failed test tool) and one repeated read."""
    got = behaviour_of(_trace())
    assert got == Behaviour(
        task="coding/x",
        steps=3,
        tool_calls=4,
        output_tokens=303,
        retries=2,
        repeated_reads=1,
    )


def test_sign_flip_is_exact_for_small_n() -> None:
    """Five positive differences: only the all-plus and all-minus assignments are as
    extreme, p = 2/32; no differences, p = 1."""
    assert sign_flip_p([1, 2, 3, 4, 5]) == pytest.approx(2 / 32)
    assert sign_flip_p([0, 0, 0]) == 1.0
    assert sign_flip_p([]) == 1.0


def _arms(shift: float, tasks: int, rng: random.Random) -> tuple[list[Behaviour], list[Behaviour]]:
    """Two arms over `tasks` tasks of different difficulty; B takes `shift` more steps."""
    a: list[Behaviour] = []
    b: list[Behaviour] = []
    for t in range(tasks):
        base = rng.randint(5, 30)
        for arm, extra in ((a, 0.0), (b, shift)):
            steps = max(1, round(base + extra + rng.gauss(0, 1.5)))
            arm.append(Behaviour(f"t{t}", steps, steps, 200 * steps, 0, 0))
    return a, b


def test_a_real_shift_is_found_and_shuffled_labels_show_none() -> None:
    """B takes 4 more steps on 10 tasks of mixed difficulty: p < 0.01. The same runs with
    A/B labels shuffled within each task: the test rejects at about its nominal rate (at
    most 12 of 100 shuffles at p < 0.05), and the mean change over shuffles is near 0."""
    rng = random.Random(7)
    a, b = _arms(4.0, 10, rng)
    steps = behaviour_shift(a, b)[0]
    assert steps.measure == "steps" and steps.n == 10
    assert steps.mean_change > 3 and steps.p_value < 0.01
    rejections, changes = 0, []
    for round_ in range(100):
        shuffle = random.Random(round_)
        left, right = [], []
        for x, y in zip(a, b, strict=True):
            pair = [x, y]
            shuffle.shuffle(pair)
            left.append(pair[0])
            right.append(pair[1])
        row = behaviour_shift(left, right, seed=round_)[0]
        rejections += row.p_value < 0.05
        changes.append(row.mean_change)
    assert rejections <= 12
    assert abs(sum(changes) / len(changes)) < 1.0


def test_no_shared_task_is_an_error() -> None:
    """Arms with no task in common cannot be paired."""
    one = [Behaviour("x", 1, 1, 1, 0, 0)]
    other = [Behaviour("y", 1, 1, 1, 0, 0)]
    with pytest.raises(ValueError, match="no task was run by both"):
        behaviour_shift(one, other)
