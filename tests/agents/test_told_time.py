"""Deadline-aware agents: the time note, the model that heeds it, and the config rules."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from looplab.agents.config import AgentConfig
from looplab.agents.deadline import told_time
from looplab.backends.policies.detours import detoured
from looplab.backends.policies.models import BEHAVIOURS, hurry_from, time_left_text
from looplab.backends.policies.scripted import ScriptedPolicy
from looplab.config import load_model
from looplab.errors import ConfigError
from looplab.experiments.config import ExperimentConfig

CONFIGS = Path(__file__).resolve().parents[2] / "experiments" / "configs"


def test_note_is_appended_only_when_told_and_budgeted() -> None:
    """On with a 30 s budget: a `Time left: ... of 30 s.` user message; off, or without a
    budget, the conversation is unchanged."""
    messages = [{"role": "user", "content": "task"}]
    on = AgentConfig(tell_remaining_time=True, wall_time_budget_s=30)
    told = told_time(messages, on, time.perf_counter() - 10)
    assert len(told) == 2 and told[-1]["role"] == "user"
    left = float(told[-1]["content"].split()[2])
    assert 19.0 <= left <= 20.0 and told[-1]["content"].endswith("of 30 s.")
    assert told_time(messages, AgentConfig(wall_time_budget_s=30), 0.0) is messages
    assert told_time(messages, AgentConfig(tell_remaining_time=True), 0.0) is messages


def test_hurry_starts_at_the_first_reply_told_it_is_short_of_time() -> None:
    """small-fast (hurry below 75% left) hurries from the reply after the first note under
    75%; large-slow never does (it does not adapt)."""
    conversation = [
        ("system", "s"),
        ("user", "prompt"),
        ("user", time_left_text(30, 30)),
        ("assistant", ""),
        ("tool", "r"),
        ("user", time_left_text(25, 30)),
        ("assistant", ""),
        ("tool", "r"),
        ("user", time_left_text(20, 30)),
    ]
    assert hurry_from(conversation, BEHAVIOURS["small-fast"]) == 2
    assert hurry_from(conversation, BEHAVIOURS["large-slow"]) is None
    assert hurry_from(conversation[:6], BEHAVIOURS["small-fast"]) is None


def test_hurried_plan_keeps_its_past_and_drops_later_detours() -> None:
    """The plan before `hurry_from` is the unhurried one (so the history check holds); from
    there on it is the reference steps alone, no detours."""
    policy = ScriptedPolicy(behaviour=BEHAVIOURS["small-fast"])
    policy._recognise("")
    assert policy._tasks is not None
    (task,) = [t for t in policy._tasks if t.task_id == "coding/nbugs"]
    values = {"n": "4"}
    full = policy.plan(task, values, seed=0)
    hurried = policy.plan(task, values, seed=0, hurry_from=3)
    assert hurried[:3] == full[:3]
    assert len(hurried) < len(full)
    texts = [s.text for s in hurried[3:]]
    assert not any("once more" in t or "did not fix it" in t for t in texts)


def test_detoured_without_hurry_is_unchanged() -> None:
    """`hurry_from=None` gives the same plan as before the option existed (same rng)."""
    import random

    policy = ScriptedPolicy()
    policy._recognise("")
    assert policy._tasks is not None
    (task,) = [t for t in policy._tasks if t.task_id == "coding/fix-pager"]
    from looplab.tasks import expand_solution

    steps = expand_solution(task.solution, {"docs_url": "http://x"})
    a = detoured(steps, random.Random(3), 0.5)
    b = detoured(steps, random.Random(3), 0.5, None)
    assert a == b and len(a) > len(steps)


def test_told_time_needs_the_wall_clock_and_a_cap() -> None:
    """The virtual clock, or no cap, with tell_remaining_time on is a config error naming
    the field; the shipped deadline-told config validates."""
    config = CONFIGS / "deadline-told.yaml"
    loaded = load_model(ExperimentConfig, config)
    assert loaded.axes["agent.tell_remaining_time"] == [False, True]
    with pytest.raises(ConfigError, match="tell_remaining_time"):
        load_model(ExperimentConfig, config, ["clock=virtual"])
    with pytest.raises(ConfigError, match="task_timeout_s"):
        load_model(ExperimentConfig, config, ["budgets.task_timeout_s=null"])
