"""Config loading: `-c key.path=value` overrides and errors that name file, line, field."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from pydantic import Field

from looplab.config import StrictModel, apply_overrides, load_model, parse_override
from looplab.errors import ConfigError


class Inner(StrictModel):
    """Test model."""

    mode: Literal["wall", "virtual"] = "wall"
    """Clock mode."""


class Outer(StrictModel):
    """Test model."""

    name: str
    """Name."""
    rates: list[float] = Field(default_factory=list)
    """Rates."""
    inner: Inner = Inner()
    """Nested."""


def test_override_values_are_yaml() -> None:
    """Override values parse as YAML scalars and lists."""
    assert parse_override("a.b=3") == (["a", "b"], 3)
    assert parse_override("a=[1, 2]") == (["a"], [1, 2])
    assert parse_override("a=null") == (["a"], None)
    assert parse_override("a=fast-750") == (["a"], "fast-750")


def test_overrides_create_and_index() -> None:
    """Overrides create missing mappings and index lists by number."""
    data = apply_overrides({"rates": [1, 2]}, ["inner.mode=virtual", "rates.1=5"])
    assert data == {"rates": [1, 5], "inner": {"mode": "virtual"}}
    with pytest.raises(ConfigError, match="out of range"):
        apply_overrides({"rates": [1]}, ["rates.4=1"])
    with pytest.raises(ConfigError, match=r"key\.path=value"):
        parse_override("no-equals-sign")


def test_errors_name_file_line_field_and_allowed(tmp_path: Path) -> None:
    """A bad value names the file, its line, the dotted field and the allowed values."""
    path = tmp_path / "exp.yaml"
    path.write_text("name: x\ninner:\n  mode: sometimes\n")
    with pytest.raises(ConfigError) as caught:
        load_model(Outer, path)
    message = str(caught.value)
    assert str(path) in message
    assert "line 3" in message
    assert "inner.mode" in message
    assert caught.value.allowed == ["'wall'", "'virtual'"]


def test_unknown_key_lists_the_known_ones(tmp_path: Path) -> None:
    """An unknown key is refused with the model's field names."""
    path = tmp_path / "exp.yaml"
    path.write_text("name: x\nratez: [1]\n")
    with pytest.raises(ConfigError) as caught:
        load_model(Outer, path)
    assert caught.value.allowed == ["inner", "name", "rates"]


def test_override_applies_before_validation(tmp_path: Path) -> None:
    """`-c` overrides win over the file and are validated like it."""
    path = tmp_path / "exp.yaml"
    path.write_text("name: x\n")
    assert load_model(Outer, path, ["inner.mode=virtual"]).inner.mode == "virtual"


def test_missing_and_invalid_files(tmp_path: Path) -> None:
    """A missing file or broken YAML is a ConfigError naming the file."""
    with pytest.raises(ConfigError, match="cannot read"):
        load_model(Outer, tmp_path / "nope.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_model(Outer, broken)
