"""The one task format (`looplab.tasks`): discovery, names, and one reading for all users."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from looplab.tasks import load_task
from looplab.backends.policies.scripted import ScriptedPolicy
from looplab.errors import ConfigError
from looplab.tasks import (
    expand_solution,
    list_tasks,
    prompt_pattern,
    read_task,
    resolve_task_name,
    substitute,
)


def test_names_resolve_to_ids_and_family_parameters() -> None:
    """`coding/nbugs-8` is the family with 8; a plain id has no parameter; unknown is an error."""
    assert resolve_task_name("coding/nbugs-8") == ("coding/nbugs", 8)
    assert resolve_task_name("coding/fix-pager") == ("coding/fix-pager", None)
    with pytest.raises(ConfigError, match="coding/fix-pager"):
        resolve_task_name("coding/no-such-task")


def test_agents_and_scripted_policy_read_the_same_solution() -> None:
    """The task set and the scripted policy expand a family instance to the same steps."""
    task = load_task("coding/nbugs-3")
    values = {"n": "3", "docs_url": "http://x"}
    policy = ScriptedPolicy()
    (recognised,) = [t for t in policy_tasks(policy) if t.task_id == "coding/nbugs"]
    assert recognised.solution == task.solution
    assert policy.plan(recognised, values, seed=0) == expand_solution(task.solution, values)


def policy_tasks(policy: ScriptedPolicy) -> list[Any]:
    """The tasks the policy recognises (its recogniser loads them on first use)."""
    policy._recognise("")
    assert policy._tasks is not None
    return policy._tasks


def test_prompt_template_round_trips_through_substitute() -> None:
    """A prompt filled by `substitute` is matched by `prompt_pattern`, giving the values back."""
    template = "Fix {n} bugs; docs at {docs_url}/index.html."
    prompt = substitute(template, {"n": "12", "docs_url": "http://127.0.0.1:9/"})
    match = prompt_pattern(template).fullmatch(prompt)
    assert match is not None
    assert match.groupdict() == {"n": "12", "docs_url": "http://127.0.0.1:9/"}


def test_a_task_without_solution_is_listed_but_not_played(tmp_path: Path) -> None:
    """Without solution.yaml a task is discovered, not loadable as a run, and not scripted."""
    bundled = Path(__file__).resolve().parents[2] / "tasks" / "coding" / "fix-pager"
    target = tmp_path / "coding" / "bare"
    shutil.copytree(bundled, target)
    (target / "solution.yaml").unlink()
    assert list_tasks(tasks_dir=tmp_path) == ["coding/bare"]
    assert read_task("coding/bare", tmp_path).solution is None
    with pytest.raises(ConfigError, match="no solution.yaml"):
        load_task("coding/bare", tmp_path)
    assert policy_tasks(ScriptedPolicy(tasks_dir=tmp_path)) == []
