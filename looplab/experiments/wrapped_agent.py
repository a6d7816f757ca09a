"""A wrapped agent's config: a foreign agent command as an experiment's agent.

The model only (`ExperimentConfig.wrapped` holds these); running one per cell is
`looplab.experiments.wrapped`, whose docstring shows the YAML.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator

from looplab.config import StrictModel
from looplab.urls import api_root

__all__ = ["WrappedAgent"]


class WrappedAgent(StrictModel):
    """A foreign agent command, run through the pacing proxy in each of its cells."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.+-]{1,64}$")
    """The agent's name in `agents`, cell ids and traces."""
    command: list[str] = Field(min_length=1)
    """The command and its arguments; `{task}`, `{prompt}`, `{workspace}` are replaced."""
    upstream: str | None = None
    """An OpenAI-compatible API root to pace (default: the cell's backend)."""
    replay: Path | None = None
    """A proxy recording to serve instead of an upstream."""
    api_key_env: str | None = None
    """Environment variable with the upstream's key (never the key itself)."""
    env: dict[str, str] = Field(default_factory=dict)
    """More environment variables for the command."""
    timeout_s: float | None = Field(default=None, gt=0)
    """Stop the command after this long."""
    check: str | None = None
    """A shell command run in the task's workspace after the agent exits that judges the
    task (exit 0 = solved; `{task}`, `{prompt}`, `{workspace}` filled in); None: the
    command's exit code decides (`looplab.backends.proxy.verdict`)."""

    _is_api_root = field_validator("upstream")(api_root)
