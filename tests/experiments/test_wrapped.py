"""A wrapped (foreign) agent command as an experiment's agent, at two profiles."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from looplab.config import validate_model
from looplab.errors import ConfigError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.traces.io import read_trace

ONE_CALL = """
import os, openai
client = openai.OpenAI()
stream = client.chat.completions.create(
    model="looplab-lorem", stream=True,
    messages=[{"role": "user", "content": os.environ["LOOPLAB_TASK_PROMPT"]}])
print(sum(1 for _ in stream), open("pager.py").read()[:0])
"""
"""A minimal foreign agent: one streamed call with the task's prompt, in its workspace."""


def _config(tmp_path: Path, agents: list[str]) -> dict[str, Any]:
    return {
        "name": "wrapped",
        "backends": [
            # ~0.75 s of decode at each rate: 2% is then ~15 ms, not the 1.6 ms that 60
            # tokens at 750 tok/s would leave to a late last token on a busy machine
            {"name": "slow-80", "profile": "slow-80", "overrides": {"output_tokens": 60}},
            {"name": "fast-750", "profile": "fast-750", "overrides": {"output_tokens": 560}},
        ],
        "wrapped": [{"name": "one-call", "command": [sys.executable, "-c", ONE_CALL]}],
        "agents": agents,
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "exp"),
    }


@pytest.mark.timing
async def test_matrix_runs_a_wrapped_agent_at_two_profiles(tmp_path: Path) -> None:
    """Each backend's cell runs the command through the proxy at that profile; traces indexed."""
    runner = ExperimentRunner(validate_model(ExperimentConfig, _config(tmp_path, ["one-call"])))
    runner.prepare_directory(fresh=True)
    result = await runner.run()
    assert [o.status for o in result.outcomes] == ["done", "done"], result.outcomes
    rates = {}
    for outcome in result.outcomes:
        trace = read_trace(outcome.trace_path)
        assert trace.complete and trace.header.source == "wrap"
        assert trace.header.experiment == "wrapped"
        assert trace.header.cell.agent == "one-call"
        assert trace.end is not None and trace.end.exit_code == 0
        (call,) = trace.model_calls()
        tokens = {"slow-80": 60, "fast-750": 560}[trace.header.cell.backend]
        assert call.output_tokens == tokens and call.decode_s
        rates[trace.header.cell.backend] = (tokens - 1) / call.decode_s
    assert rates["slow-80"] == pytest.approx(80, rel=0.02)
    assert rates["fast-750"] == pytest.approx(750, rel=0.02)
    assert result.database.exists()


def test_unknown_agent_is_named(tmp_path: Path) -> None:
    """An agent that is neither built in nor declared under `wrapped` is refused by name."""
    with pytest.raises(ConfigError, match="not-declared"):
        validate_model(ExperimentConfig, _config(tmp_path, ["not-declared"]))


async def test_a_wrapped_agents_check_judges_its_runs(tmp_path: Path) -> None:
    """`wrapped[].check` runs in the task's workspace after the agent (placeholders filled):
    its exit status is the run's verdict, recorded with who gave it."""
    config = _config(tmp_path, ["one-call"])
    config["backends"] = config["backends"][1:]
    config["wrapped"][0]["check"] = "test -f pager.py && test {task} = nothing"
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=True)
    (outcome,) = (await runner.run()).outcomes
    end = read_trace(outcome.trace_path).end
    assert end is not None and end.exit_code == 0
    assert (end.success, end.verdict_by, outcome.success) == (False, "check command", False)
    assert end.check_output is not None and "[check exited with status 1]" in end.check_output
