"""A docker sandbox whose tmpfs (workspace + /tmp) would not fit its memory limit is
refused at config validation (issue 36, finding 10: `memory: 512m` with the default 512m
workspace lost its in-sandbox helper when the workspace filled)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from looplab.config import validate_model
from looplab.errors import ConfigError
from looplab.experiments.config import ExperimentConfig
from looplab.sandbox_contract import SandboxConfig

pytestmark = [pytest.mark.reliability]


def test_default_workspace_over_a_512m_limit_is_refused_naming_both_fields() -> None:
    """`memory: 512m` with the default 512m workspace: refused, naming both fields."""
    with pytest.raises(ValidationError) as caught:
        SandboxConfig(kind="docker", memory="512m")
    message = str(caught.value)
    assert "workspace_size (512m)" in message and "memory (512m)" in message


def test_an_experiment_config_says_it_as_a_config_error() -> None:
    """Through the experiment config: a `ConfigError` (the CLI's clear error, no traceback)."""
    data = {
        "name": "tight",
        "backends": [{"name": "fast", "profile": "fast-750"}],
        "tasks": ["coding/fix-pager"],
        "sandbox": {"kind": "docker", "memory": "512m"},
    }
    with pytest.raises(ConfigError) as caught:
        validate_model(ExperimentConfig, data, source="tight.yaml")
    assert "workspace_size" in str(caught.value) and "memory" in str(caught.value)


def test_fitting_and_local_configs_are_kept() -> None:
    """Defaults (1g over 512m + 256m), a small workspace, and the local kind are accepted."""
    SandboxConfig(kind="docker")
    SandboxConfig(kind="docker", memory="512m", workspace_size="128m", tmp_size="64m")
    SandboxConfig(kind="local", memory="256m")
