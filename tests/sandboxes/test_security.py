"""Sandboxes outlive nothing: a crashed owner's sandbox dies or is pruned (docker, local+bwrap).

The containment probes (network, host files, privileges, limits, timeouts) are in
tests/reliability/test_containment.py.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

needs_bwrap = pytest.mark.bwrap
KINDS = [
    pytest.param("local", marks=needs_bwrap),
    pytest.param("docker", marks=pytest.mark.docker),
]


_CRASHING_RUN = """
import asyncio, os, signal, sys
from looplab.sandbox_contract import SandboxConfig
from looplab.sandboxes.docker import DockerSandbox

async def main():
    box = await DockerSandbox.create(config=SandboxConfig(kind="docker"), run_id=sys.argv[1])
    await box.exec("true")
    print(box.id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


@pytest.mark.docker
def test_no_container_leaks_after_a_crashed_run_and_prune() -> None:
    """A run killed with SIGKILL leaves no container behind once prune has run."""
    import docker

    from looplab.sandboxes.prune import looplab_containers, prune

    run_id = f"crash-{uuid.uuid4().hex[:8]}"
    done = subprocess.run(
        [sys.executable, "-c", _CRASHING_RUN, run_id],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert len(done.stdout.strip()) == 12
    prune(run_id=run_id)
    client = docker.from_env()
    try:
        left = looplab_containers(client, f"looplab.run={run_id}")
    finally:
        client.close()
    assert left == []


@needs_bwrap
def test_local_sandbox_tree_dies_with_its_owner(tmp_path: Path) -> None:
    """Killing the owner with SIGKILL also kills the bubblewrap sandbox's commands."""
    marker = f"sleep {uuid.uuid4().int % 1000 + 1000}.5"
    script = f"""
import asyncio, os, signal
from looplab.sandboxes.local import LocalSandbox

async def main():
    box = await LocalSandbox.create()
    task = asyncio.create_task(box.exec("{marker}"))
    await asyncio.sleep(0.5)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""
    subprocess.run(
        [sys.executable, "-c", script], cwd=Path(__file__).parents[2], timeout=60, check=False
    )
    survivors = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, check=False)
    assert survivors.stdout == ""
    from looplab.sandboxes.leftovers import prune_host

    pruned = prune_host()  # its workspace (and cgroup) stayed: the owner could not clean up
    assert pruned.failed == []


@pytest.mark.docker
def test_prune_takes_a_container_gone_mid_listing_for_gone() -> None:
    """A container removed between the engine's list and its inspect (an auto-remove racing
    prune, as under load) is skipped, not a NotFound: made to happen on the real engine by
    removing it right after the list call returns."""
    import docker

    from looplab.sandboxes.image import IMAGE_TAG
    from looplab.sandboxes.prune import prune

    run_id = f"race-{uuid.uuid4().hex[:8]}"
    client = docker.from_env()
    labels = {"looplab": "1", "looplab.run": run_id, "looplab.owner": "gone:1"}
    created = [client.containers.create(IMAGE_TAG, ["true"], labels=labels) for _ in range(2)]
    listed = client.api.containers

    def list_then_remove_one(*args: object, **kwargs: object) -> object:
        rows = listed(*args, **kwargs)
        client.api.remove_container(created[0].id, force=True)
        return rows

    client.api.containers = list_then_remove_one  # type: ignore[method-assign]
    try:
        result = prune(everything=True, run_id=run_id, client=client)
    finally:
        client.api.containers = listed  # type: ignore[method-assign]
        for container in created:
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)
        client.close()
    assert result.removed == [str(created[1].id)[:12]], result
