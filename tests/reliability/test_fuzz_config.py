"""Fuzzed experiment configs: a clear `ConfigError` (or a valid experiment), never a traceback
or a hang, and nothing written before validation ends.

Three generators: valid configs with fields replaced by arbitrary YAML values, arbitrary
YAML documents (anchors and aliases included), and arbitrary bytes. Each case is loaded
and fully validated (`ExperimentRunner.validate`: tasks, cell count, profiles).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from looplab.config import load_model
from looplab.errors import ConfigError, PrerequisiteError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner

from .conftest import FUZZ

pytestmark = [pytest.mark.reliability]

BASE: dict[str, Any] = {
    "name": "fuzz",
    "backends": [
        {"name": "slow", "profile": "slow-80", "overrides": {"decode_tps": 100}},
        {"name": "fast", "profile": "fast-750"},
    ],
    "tasks": ["coding/fix-pager", {"family": "coding/nbugs", "values": [1, 2]}],
    "repetitions": 2,
    "seed": 3,
    "sandbox": {"kind": "local", "memory": "512m"},
    "budgets": {"max_steps": 10},
    "concurrency": 2,
    "clock": "virtual",
}

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["..", ".", "", "coding/*", "nope/*", "1e999", "0", "-1", "fast-750", "0:0"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
PATHS = st.sampled_from(
    [
        ("name",), ("backends",), ("backends", 0), ("backends", 0, "name"),
        ("backends", 1, "overrides"), ("backends", 0, "overrides", "decode_tps"),
        ("backends", 1, "kind"), ("tasks",), ("tasks", 1, "values"), ("repetitions",),
        ("seed",), ("sandbox",), ("sandbox", "memory"), ("sandbox", "kind"),
        ("sandbox", "user"), ("budgets", "max_steps"), ("concurrency",), ("clock",),
        ("agents",), ("max_cells",), ("output_dir",), ("unknown_field",),
    ]
)  # fmt: skip


def _has(node: Any, key: Any) -> bool:
    if isinstance(node, dict):
        return key in node
    return isinstance(node, list) and isinstance(key, int) and key < len(node)


def _set(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """`data` with the value at `path` replaced (paths that no longer exist are skipped)."""
    node: Any = data
    for key in path[:-1]:
        if not _has(node, key):
            return data
        node = node[key]
    if isinstance(node, dict) or _has(node, path[-1]):
        node[path[-1]] = value
    return data


def _check(text: bytes, campaign: Any) -> None:
    """Load and validate one config file; nothing may be written while validating."""
    with tempfile.TemporaryDirectory(prefix="looplab-fuzz-") as scratch:
        path = Path(scratch, "config.yaml")
        path.write_bytes(text)
        with campaign.case("config", (ConfigError, PrerequisiteError)):
            config = load_model(ExperimentConfig, path)
            config = config.model_copy(update={"output_dir": Path(scratch, "out")})
            ExperimentRunner(config).validate()
        assert not Path(scratch, "out").exists(), "validation wrote the output directory"


@FUZZ
@given(mutations=st.lists(st.tuples(PATHS, VALUES), min_size=1, max_size=3))
def test_mutated_configs(campaign: Any, mutations: list[tuple[tuple[Any, ...], Any]]) -> None:
    """A valid config with fields replaced by arbitrary values."""
    data = yaml.safe_load(yaml.safe_dump(BASE))
    for path, value in mutations:
        data = _set(data, path, value)
    try:
        text = yaml.safe_dump(data, allow_unicode=True).encode()
    except (yaml.YAMLError, ValueError):
        return
    _check(text, campaign)


ANCHORED = st.integers(min_value=1, max_value=12).map(
    lambda n: "\n".join(
        ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
        + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, n)]
        + ["name: bomb", "backends: [{name: f, profile: fast-750}]", "tasks: [coding/fix-pager]"]
    )
)
NESTED = st.integers(min_value=1, max_value=3000).map(lambda n: "x: " + "[" * n + "]" * n)


@FUZZ
@given(
    text=st.one_of(
        st.text(max_size=300),
        ANCHORED,
        NESTED,
        st.just("a: &a [*a]\n"),
        VALUES.map(lambda v: yaml.safe_dump({**BASE, "tasks": v})),
    )
)
def test_arbitrary_yaml(campaign: Any, text: str) -> None:
    """Arbitrary YAML documents: anchor bombs, recursive anchors, deep nesting, junk."""
    _check(text.encode("utf-8", "surrogatepass"), campaign)


@FUZZ
@given(blob=st.binary(max_size=400), cut=st.integers(min_value=0, max_value=400))
def test_arbitrary_bytes(campaign: Any, blob: bytes, cut: int) -> None:
    """Byte soup, and valid configs with bytes spliced in (non-UTF-8 included)."""
    valid = yaml.safe_dump(BASE).encode()
    _check(blob, campaign)
    _check(valid[:cut] + blob + valid[cut:], campaign)


REFUSED = [
    (["backends.0.policy=nope"], "unknown policy 'nope'"),
    (["backends.0.kind=real", "backends.0.model=m", "backends.0.base_url=not a url"], "not a URL"),
    (["backends.0.kind=real", "backends.0.model=m", "backends.0.base_url=ftp://h/v1"], "http(s)"),
    (["sandbox.memory=99999999999999999999g"], "largest size"),
    (["sandbox.tmp_size=" + "9" * 5000], "integer of 5000 digits"),
    (["seed=" + "7" * 5000], "integer of 5000 digits"),
]


@pytest.mark.parametrize(("overrides", "said"), REFUSED, ids=[s for _, s in REFUSED])
def test_refused_before_the_first_cell(
    tmp_path: Path, campaign: Any, overrides: list[str], said: str
) -> None:
    """Unknown policies, unparsable base URLs, absurd sizes, 5000-digit integers: a clear
    ConfigError at load time, before anything is written."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({**BASE, "output_dir": str(tmp_path / "out")}))
    with campaign.case("config", ()), pytest.raises(ConfigError) as refused:
        ExperimentRunner(load_model(ExperimentConfig, path, overrides)).validate()
    assert said in str(refused.value)
    assert not (tmp_path / "out").exists()


def test_a_5000_digit_integer_in_a_file(tmp_path: Path) -> None:
    """A 5000-digit integer written in the YAML file is refused with its line, no traceback."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(BASE) + "max_cells: " + "1" * 5000 + "\n")
    with pytest.raises(ConfigError, match=r"line \d+: an integer of 5000 digits"):
        load_model(ExperimentConfig, path)


def test_every_cell_failing_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], broken_api: str
) -> None:
    """A run whose every cell ends in backend_error (an API failing every call, alive at
    preflight) exits 1 and says why."""
    from looplab.cli.main import main

    config = {
        "name": "unreachable",
        "backends": [{"name": "api", "kind": "real", "base_url": broken_api, "model": "m"}],
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "out"),
        "sandbox": {"isolation": "none"},
        "agent": {"retry": {"max_attempts": 1}},
        "budgets": {"max_steps": 1},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(SystemExit) as stop:
        main(["run", str(path)])
    err = " ".join(capsys.readouterr().err.split())
    assert stop.value.code == 1, err
    assert "every cell (1) ended in an error, so nothing was measured" in err
