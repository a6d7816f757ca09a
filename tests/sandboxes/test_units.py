"""Unit tests of the sandbox pieces that need no sandbox: paths, sizes, config, image, owner."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import pytest
from pydantic import ValidationError

from looplab.errors import SandboxError
from looplab.sandbox_contract import SandboxConfig, parse_size
from looplab.sandboxes._paths import workspace_relative
from looplab.sandboxes._support import CappedOutput, exit_status
from looplab.sandboxes.image import DOCKERFILE, IMAGE_ENV, IMAGE_USER, IMAGE_WORKDIR, inputs_hash
from looplab.sandboxes.owner import owner_gone, owner_label


@pytest.mark.parametrize(
    ("given", "expected"),
    [("a/b", "a/b"), ("./a/../b", "b"), ("/workspace/x/y", "x/y"), ("/workspace", "."), ("", ".")],
)
def test_workspace_relative_normalises_paths_inside(given: str, expected: str) -> None:
    """Paths inside the workspace normalise to a relative path."""
    assert workspace_relative(given, "/workspace", sandbox_id="t") == PurePosixPath(expected)


@pytest.mark.parametrize("given", ["..", "a/../../b", "/etc/passwd", "/workspacex/a", "a\0b"])
def test_workspace_relative_refuses_escapes(given: str) -> None:
    """`..` climbing out, absolute paths elsewhere and NUL bytes are refused with the id."""
    with pytest.raises(SandboxError, match=r"\[sandbox t\]"):
        workspace_relative(given, "/workspace", sandbox_id="t")


def test_parse_size_reads_units() -> None:
    """Sizes accept plain bytes and k/m/g suffixes (binary units)."""
    assert [parse_size(v) for v in (4096, "4096", "512m", "1g", "1MiB")] == [
        4096,
        4096,
        512 * 2**20,
        2**30,
        2**20,
    ]
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")


def test_config_forbids_unknown_fields_and_bad_sizes() -> None:
    """SandboxConfig rejects typos and unreadable sizes; defaults are the safe ones."""
    with pytest.raises(ValidationError):
        SandboxConfig(memroy="1g")  # type: ignore[call-arg]  # the typo is the point
    with pytest.raises(ValidationError):
        SandboxConfig(memory="plenty")
    config = SandboxConfig()
    assert (config.network, config.output_limit_bytes, config.user) == ("none", 2**20, "1000:1000")


def test_capped_output_keeps_the_head_and_counts_the_rest() -> None:
    """Output over the cap keeps the first bytes and reports how many were dropped."""
    capped = CappedOutput(5)
    capped.feed(b"abc")
    capped.feed(b"defgh")
    assert capped.text().startswith("abcde\n[looplab: output truncated, 3 more bytes dropped]")
    assert exit_status(-9) == 137
    assert exit_status(3) == 3


def test_dockerfile_matches_the_offline_image_config() -> None:
    """The Dockerfile's ENV, WORKDIR and USER equal what the debootstrap path applies."""
    text = DOCKERFILE.read_text()
    env_line = re.search(r"^ENV (.+)$", text, flags=re.M)
    assert env_line is not None
    dockerfile_env = dict(item.split("=", 1) for item in env_line.group(1).split())
    assert {k: v for k, v in IMAGE_ENV.items() if k != "PATH"} == dockerfile_env
    assert re.search(r"^WORKDIR (\S+)$", text, flags=re.M).group(1) == IMAGE_WORKDIR  # type: ignore[union-attr]  # asserted present by the comparison
    assert re.search(r"^USER (\S+)$", text, flags=re.M).group(1) == IMAGE_USER  # type: ignore[union-attr]  # asserted present by the comparison


def test_inputs_hash_is_stable() -> None:
    """The build cache key is deterministic (same inputs, same hash)."""
    assert inputs_hash() == inputs_hash()
    assert len(inputs_hash()) == 16


def test_owner_label_of_this_process_is_alive() -> None:
    """This process's own label is not gone; a dead pid's label is."""
    label = owner_label()
    assert not owner_gone(label)
    host = label.split(":")[0]
    assert owner_gone(f"{host}:999999999:1")
    assert not owner_gone("another-host:1:1")
