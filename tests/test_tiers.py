"""The tier gate of tests/conftest.py: a required tier that cannot run fails with its reason,
and docker-tier tests wait for `make test`'s background image build before deciding."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import _docker_engine_problem

REPO = Path(__file__).resolve().parents[1]
PROBE = "tests/test_tiers.py::test_docker_probe"


@pytest.mark.docker
def test_docker_probe() -> None:
    """The probe the other tests run in a child pytest: the tier's image is there."""
    from looplab.sandbox_contract import default_image
    from looplab.sandboxes.engine import connect_engine

    client = connect_engine(timeout_s=5)
    try:
        assert client.images.get(default_image()).id
    finally:
        client.close()


def _child(env: dict[str, str]) -> subprocess.Popen[str]:
    """A child pytest running only the probe, with `env` on top of ours."""
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", PROBE],
        cwd=REPO,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_a_required_tier_that_cannot_run_fails_with_the_reason() -> None:
    """LOOPLAB_REQUIRE_DOCKER=1 without the image: the probe fails, naming the variable and
    the missing image (it used to run and fail on the image, or pass by skipping)."""
    child = _child(
        {"LOOPLAB_SANDBOX_IMAGE": "looplab/sandbox:absent", "LOOPLAB_REQUIRE_DOCKER": "1"}
    )
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 1, out
    assert "LOOPLAB_REQUIRE_DOCKER=1 but" in out


@pytest.mark.skipif(_docker_engine_problem() is not None, reason="no Docker engine answers")
def test_docker_tests_wait_for_the_background_image_build(tmp_path: Path) -> None:
    """While the build's lock is held the probe waits; once it is let go without an image,
    the probe is skipped with the reason."""
    lock = tmp_path / "image-build.lock"
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        child = _child(
            {
                "LOOPLAB_SANDBOX_IMAGE": "looplab/sandbox:absent",
                "LOOPLAB_IMAGE_BUILD_LOCK": str(lock),
                "LOOPLAB_REQUIRE_DOCKER": "",
            }
        )
        deadline = time.monotonic() + 60
        while child.poll() is None and time.monotonic() < deadline and not _waiting(child):
            time.sleep(0.2)
        assert _waiting(child), "the probe did not wait for the build"
        fcntl.flock(held, fcntl.LOCK_UN)
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0, out
    assert "docker tier: the sandbox image looplab/sandbox:absent" in out and "1 skipped" in out


def _waiting(child: subprocess.Popen[str]) -> bool:
    """True once the child blocks on the lock (/proc/locks lists its request as waiting)."""
    locks = Path("/proc/locks").read_text(encoding="utf-8")
    return any("->" in line and f" {child.pid} " in line for line in locks.splitlines())
