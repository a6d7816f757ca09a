"""The run's deadline reaches the agent under one name, validated at each hop (issue 48):
`budgets.wall_time_s` / `task_timeout_s` and the task's `limits.wall_time_s` become the
agent's `wall_time_budget_s`, the tightest of them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from looplab.agents.config import AgentConfig, tightest
from looplab.agents.runner import _with_task_limits
from looplab.config import replaced
from looplab.experiments.cell import agent_config
from looplab.experiments.config import ExperimentConfig
from looplab.tasks import load_task


def _experiment(**budgets: object) -> ExperimentConfig:
    return ExperimentConfig.model_validate(
        {
            "name": "limits",
            "backends": [{"name": "fast-750", "profile": "fast-750"}],
            "tasks": ["coding/fix-pager"],
            "budgets": {"max_steps": 7, "max_tokens": 5000, **budgets},
        }
    )


def test_the_cap_is_the_agents_deadline_on_the_wall_clock_only() -> None:
    """On the wall clock the task time cap tightens the wall-time budget; on the virtual
    clock only the wall-time budget reaches the agent (the cap applies after the run)."""
    config = _experiment(wall_time_s=20.0, task_timeout_s=5.0)
    wall, virtual = agent_config(config, clock="wall"), agent_config(config, clock="virtual")
    assert (wall.max_steps, wall.token_budget, wall.wall_time_budget_s) == (7, 5000, 5.0)
    assert virtual.wall_time_budget_s == 20.0
    assert agent_config(_experiment(task_timeout_s=9.0), clock="wall").wall_time_budget_s == 9.0
    assert agent_config(_experiment(task_timeout_s=9.0)).wall_time_budget_s is None


def test_the_agent_sections_own_budgets_are_not_ignored() -> None:
    """`agent.wall_time_budget_s` / `agent.token_budget` in an experiment hold when tighter
    than the `budgets` ones (they used to be replaced by them, even by an unset one)."""
    config = ExperimentConfig.model_validate(
        {
            "name": "limits",
            "backends": [{"name": "fast-750", "profile": "fast-750"}],
            "tasks": ["coding/fix-pager"],
            "agent": {"wall_time_budget_s": 30.0, "token_budget": 900},
            "budgets": {"max_steps": 7, "wall_time_s": 60.0},
        }
    )
    agent = agent_config(config)
    assert (agent.max_steps, agent.token_budget, agent.wall_time_budget_s) == (7, 900, 30.0)
    looser = replaced(config, budgets=replaced(config.budgets, max_tokens=5000, wall_time_s=10.0))
    assert (agent_config(looser).token_budget, agent_config(looser).wall_time_budget_s) == (
        900,
        10.0,
    )


def test_the_tasks_own_limits_tighten_the_agents() -> None:
    """A task's `limits` (60 steps, 900 s by default) hold when tighter than the agent's."""
    task = load_task("coding/fix-pager")
    loose = _with_task_limits(AgentConfig(max_steps=500, wall_time_budget_s=5000.0), task)
    assert (loose.max_steps, loose.wall_time_budget_s) == (
        task.spec.limits.max_steps,
        task.spec.limits.wall_time_s,
    )
    tight = _with_task_limits(AgentConfig(max_steps=3, wall_time_budget_s=2.0), task)
    assert (tight.max_steps, tight.wall_time_budget_s) == (3, 2.0)
    assert tightest(None, None) is None and tightest(None, 3.0, 2.0) == 2.0


def test_a_wrong_limit_fails_at_the_hop() -> None:
    """`with_limits` and `replaced` validate: a zero budget, a step count of 0 or a
    misspelled field raise there, where `model_copy(update=...)` let them through."""
    config = AgentConfig()
    with pytest.raises(ValidationError):
        config.with_limits(max_steps=0, token_budget=None, wall_time_budget_s=None)
    with pytest.raises(ValidationError):
        config.with_limits(max_steps=5, token_budget=None, wall_time_budget_s=0.0)
    with pytest.raises(ValidationError):
        replaced(config, wall_time_budget=3.0)
    assert replaced(config, fanout=True).fanout is True and config.fanout is False
