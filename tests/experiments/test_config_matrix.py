"""Experiment configs: validation errors people see, and matrix expansion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from looplab.config import load_model, validate_model
from looplab.errors import ConfigError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.matrix import expand_cells

CONFIGS = Path(__file__).resolve().parents[2] / "experiments" / "configs"


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_configs_validate_and_expand(path: Path) -> None:
    """Every shipped config loads and expands into at least two cells."""
    config = load_model(ExperimentConfig, path)
    assert len(expand_cells(config)) >= 2


def test_matrix_is_backend_x_task_x_repetition(small_config: dict[str, Any]) -> None:
    """Cells cover every backend x task x repetition with stable, distinct ids."""
    small_config["tasks"] = ["coding/fix-pager", {"family": "coding/nbugs", "values": [1, 3]}]
    small_config["repetitions"] = 2
    cells = expand_cells(validate_model(ExperimentConfig, small_config))
    assert len(cells) == 2 * 3 * 2
    assert len({c.id for c in cells}) == len(cells)
    assert {c.task for c in cells} == {"coding/fix-pager", "coding/nbugs-1", "coding/nbugs-3"}
    assert {c.seed for c in cells} == {0, 1}
    assert all(c.agent == "coding" for c in cells)


def test_globs_expand_and_unknown_tasks_are_named(small_config: dict[str, Any]) -> None:
    """A glob expands to bundled tasks; an unknown task is refused with the allowed ids."""
    small_config["tasks"] = ["coding/fix-*"]
    cells = expand_cells(validate_model(ExperimentConfig, small_config))
    assert {c.task for c in cells} == {"coding/fix-pager", "coding/fix-discount"}
    small_config["tasks"] = ["coding/fix-everything"]
    with pytest.raises(ConfigError) as caught:
        expand_cells(validate_model(ExperimentConfig, small_config))
    assert "coding/fix-pager" in caught.value.allowed


def test_yaml_errors_name_file_line_and_allowed(
    tmp_path: Path, small_config: dict[str, Any]
) -> None:
    """A bad clock value is reported with the file, its line and the allowed values."""
    small_config["clock"] = "sundial"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(small_config, sort_keys=False))
    with pytest.raises(ConfigError) as caught:
        load_model(ExperimentConfig, path)
    message = str(caught.value)
    assert str(path) in message
    assert "field 'clock'" in message
    assert "'wall'" in message and "'virtual'" in message
    assert "line" in message


def test_real_backend_needs_url_and_model(small_config: dict[str, Any]) -> None:
    """A real backend without base_url/model is refused."""
    small_config["backends"] = [{"name": "api", "kind": "real"}]
    with pytest.raises(ConfigError, match="base_url and model"):
        validate_model(ExperimentConfig, small_config)


def test_overrides_apply(tmp_path: Path, small_config: dict[str, Any]) -> None:
    """`-c key.path=value` overrides reach nested fields before validation."""
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(small_config))
    config = load_model(
        ExperimentConfig, path, ["repetitions=3", "sandbox.kind=local", "clock=virtual"]
    )
    assert (config.repetitions, config.clock) == (3, "virtual")
