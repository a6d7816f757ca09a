"""Experiment configs are bounded and checked before anything is written: YAML bombs,
nesting, encodings, matrix size, integer ranges, duplicate and path-unsafe names, secrets."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from looplab.config import MAX_YAML_DEPTH, load_model, parse_override, validate_model
from looplab.errors import ConfigError
from looplab.experiments.config import MAX_SEED, ExperimentConfig
from looplab.experiments.runner import ExperimentRunner

BASE: dict[str, Any] = {
    "name": "safe",
    "backends": [{"name": "fast", "profile": "fast-750"}],
    "tasks": ["coding/fix-pager"],
}


def _yaml(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_anchor_bomb_fails_fast(tmp_path: Path) -> None:
    """The 779-byte billion-laughs document is refused at once, not expanded."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    text = "\n".join(lines) + "\n"
    assert len(text) < 800
    started = time.perf_counter()
    with pytest.raises(ConfigError, match="anchor bomb"):
        load_model(ExperimentConfig, _yaml(tmp_path, text))
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: &a [*a]\n", "recursive YAML anchor"),
        ("x: " + "[" * 1000 + "]" * 1000 + "\n", "nested too deeply"),
        ("x: " + "[" * (MAX_YAML_DEPTH + 5) + "]" * (MAX_YAML_DEPTH + 5) + "\n", "the limit is 64"),
        # refused by libyaml (past its 1,000 levels; broken at 900): never re-read by the
        # pure-Python scanner, quadratic in depth (a fuzz case took 300 s under load)
        ("x: " + "[" * 5000 + "\n", "the limit is 64"),
        ("x: " + "[a, " * 900 + ": :\n", "the limit is 64"),
    ],
)
def test_recursive_and_deep_yaml_is_refused(tmp_path: Path, text: str, message: str) -> None:
    """Recursive anchors and deep nesting are clear errors, not RecursionError."""
    with pytest.raises(ConfigError, match=message):
        load_model(ExperimentConfig, _yaml(tmp_path, text))


def test_non_utf8_config_names_the_byte_offset(tmp_path: Path) -> None:
    """A Latin-1 byte is named with its offset in the file."""
    with pytest.raises(ConfigError, match=r"byte 0xe9 at offset 9"):
        load_model(ExperimentConfig, _yaml(tmp_path, b"name: caf\xe9\n"))


def test_fifo_config_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO named like a config is refused, never opened (which would block)."""
    fifo = tmp_path / "exp.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_model(ExperimentConfig, fifo)


def test_override_values_are_bounded_too() -> None:
    """A `-s` value is parsed with the same bounds as a file."""
    bomb = "[" * 1000 + "]" * 1000
    with pytest.raises(ConfigError, match="nested too deeply"):
        parse_override(f"tasks={bomb}")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"repetitions": 1_000_000}, "max_cells"),
        ({"seed": MAX_SEED + 1}, "seed"),
        ({"seed": MAX_SEED, "repetitions": 2}, "seed"),
        ({"backends": [BASE["backends"][0], BASE["backends"][0]]}, "duplicate names"),
        ({"agents": ["coding", "coding"]}, "duplicates"),
        ({"name": ".."}, "plain name"),
        ({"backends": [{"name": "..", "profile": "fast-750"}]}, "plain name"),
        ({"budgets": {"max_steps": 10**9}}, "max_steps"),
    ],
)
def test_unsafe_values_are_refused_before_anything_runs(
    tmp_path: Path, change: dict[str, Any], field: str
) -> None:
    """Matrix size, seeds beyond the index's BIGINT, duplicates and `..` are refused."""
    with pytest.raises(ConfigError, match=field):
        validate_model(ExperimentConfig, {**BASE, **change, "output_dir": str(tmp_path / "o")})
    assert not (tmp_path / "o").exists()


def test_max_cells_is_an_explicit_override(tmp_path: Path) -> None:
    """A big matrix is accepted when max_cells says so; globs are counted once expanded."""
    big = {**BASE, "repetitions": 20_000, "max_cells": 20_000}
    assert validate_model(ExperimentConfig, big).repetitions == 20_000
    wide = {**BASE, "tasks": ["coding/*"], "repetitions": 3, "max_cells": 5}
    runner = ExperimentRunner(validate_model(ExperimentConfig, wide))
    with pytest.raises(ConfigError, match="globs expanded"):
        runner.validate()


def test_invalid_experiment_writes_nothing(tmp_path: Path) -> None:
    """An unknown task fails in prepare_directory before the directory exists."""
    config = {**BASE, "tasks": ["coding/no-such-task"], "output_dir": str(tmp_path / "out")}
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    with pytest.raises(ConfigError, match="no-such-task"):
        runner.prepare_directory(fresh=False)
    assert not (tmp_path / "out").exists()


def test_url_credentials_never_reach_config_json(tmp_path: Path) -> None:
    """A password in a real backend's base_url is refused (never stored nor printed)."""
    real = {"name": "real", "kind": "real", "model": "m", "base_url": "http://bob:hunter22@h/v1"}
    config = {**BASE, "backends": [real], "output_dir": str(tmp_path / "out")}
    with pytest.raises(ConfigError, match="credentials in the URL") as refused:
        validate_model(ExperimentConfig, config)
    assert "hunter22" not in str(refused.value)
    assert not (tmp_path / "out").exists()


def _tree(node: Any) -> Any:
    """A node tree as plain data: tag, position and value, children in order."""
    if isinstance(node, tuple):
        return [_tree(part) for part in node]
    value = node.value
    children = [_tree(child) for child in value] if isinstance(value, list) else value
    return (node.tag, node.start_mark.line, node.start_mark.column, children)


def test_libyaml_and_the_python_composer_read_every_shipped_file_alike() -> None:
    """Every YAML file the project ships composes, by libyaml (used when PyYAML has it), to
    the node tree the pure-Python composer gives: tags, values and the lines errors cite."""
    import yaml

    from looplab.config import _compose

    if not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("this PyYAML has no libyaml: parse_yaml uses the pure-Python composer")
    root = Path(__file__).resolve().parents[2]
    files = [
        p
        for folder in ("looplab", "tasks", "experiments")
        for p in sorted((root / folder).rglob("*.yaml"))
    ]
    assert len(files) > 40
    for path in files:
        text = path.read_text(encoding="utf-8")
        expected = yaml.compose(text, Loader=yaml.SafeLoader)
        assert _tree(_compose(text)) == _tree(expected), path
