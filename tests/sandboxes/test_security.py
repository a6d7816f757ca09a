"""Security tests: what a command in a sandbox must not be able to do (docker, local+bwrap)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from looplab.sandbox import Sandbox, SandboxConfig
from looplab.sandboxes.factory import open_sandbox

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
KINDS = [
    pytest.param("local", marks=needs_bwrap),
    pytest.param("docker", marks=pytest.mark.docker),
]


@pytest.fixture(params=KINDS)
async def sandbox(request: pytest.FixtureRequest) -> AsyncIterator[Sandbox]:
    """An isolated sandbox with small limits (256 MiB, 64 pids)."""
    config = SandboxConfig(kind=request.param, memory="256m", pids=64, isolation="auto")
    box = await open_sandbox(config)
    assert box.isolated
    yield box
    await box.close()


async def test_no_network_route_out(sandbox: Sandbox) -> None:
    """Only loopback exists: routing to an outside address fails (UDP connect sends nothing)."""
    probe = textwrap.dedent(
        """
        import socket
        print(sorted(name for _, name in socket.if_nameindex()))
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.connect(("192.0.2.1", 9))
            print("routed")
        except OSError as exc:
            print("unreachable", exc.errno)
        """
    )
    result = await sandbox.exec(["python3", "-c", probe])
    assert result.stdout.splitlines() == ["['lo']", "unreachable 101"]


async def test_cannot_write_outside_the_workspace(sandbox: Sandbox) -> None:
    """The system is read-only; only the workspace and a private /tmp are writable."""
    marker = f"looplab-{uuid.uuid4().hex}"
    script = (
        f"for d in /etc /usr /; do touch $d/{marker} 2>/dev/null && echo wrote $d; done; "
        f"touch /tmp/{marker} && touch {marker} && echo ok"
    )
    result = await sandbox.exec(script)
    assert result.stdout == "ok\n"
    leaked = [d for d in ("/tmp", "/etc") if await asyncio.to_thread(Path(d, marker).exists)]
    assert leaked == []


async def test_runs_as_non_root_without_capabilities(sandbox: Sandbox) -> None:
    """Commands run unprivileged (uid 1000; nobody for a local sandbox of a root looplab)
    with empty effective, permitted and bounding capability sets."""
    result = await sandbox.exec("id -u; grep -E 'Cap(Eff|Prm|Bnd)' /proc/self/status")
    local_root = getattr(sandbox, "kind", "") == "local" and os.geteuid() == 0
    uid = "65534" if local_root else "1000"
    zero = "0000000000000000"
    expected = [uid, "CapPrm:", zero, "CapEff:", zero, "CapBnd:", zero]
    assert result.stdout.split() == expected


async def test_runaway_test_is_killed_by_the_timeout(sandbox: Sandbox) -> None:
    """A pytest run stuck in a loop is killed at its timeout; the sandbox stays usable."""
    loop = (
        "def test_forever():\n    while True:\n        pass\n\n"
        "if __name__ == '__main__':\n    test_forever()\n"
    )
    await sandbox.write_file("test_loop.py", loop)
    # the host's python3 (local sandbox) may lack pytest: then the file runs as a script
    command = "python3 -m pytest -q -p no:cacheprovider 2>/dev/null; python3 test_loop.py"
    result = await sandbox.exec(command, timeout_s=2)
    assert result.timed_out
    assert result.exit_code == 137
    assert result.duration_s < 6
    assert (await sandbox.exec("echo alive")).stdout == "alive\n"


async def test_memory_hog_is_stopped(sandbox: Sandbox) -> None:
    """Allocating far beyond the memory limit fails (OOM kill or MemoryError), not the host."""
    hog = "chunks = []\nwhile True:\n    chunks.append(bytearray(64 * 1024 * 1024))\n"
    result = await sandbox.exec(["python3", "-c", hog], timeout_s=30)
    assert not result.timed_out
    assert result.exit_code == 137 or "MemoryError" in result.stderr
    assert (await sandbox.exec("echo alive")).stdout == "alive\n"


@pytest.mark.docker
async def test_fork_bomb_is_contained_by_the_pids_limit() -> None:
    """Spawning processes stops near the pids limit (64); the sandbox survives it."""
    spawner = textwrap.dedent(
        """
        import subprocess
        children = []
        try:
            for _ in range(500):
                children.append(subprocess.Popen(["sleep", "20"]))
        except OSError as exc:
            print(len(children), exc.errno)
        else:
            print(len(children), 0)
        """
    )
    config = SandboxConfig(kind="docker", pids=64)
    async with await open_sandbox(config) as box:
        result = await box.exec(["python3", "-c", spawner], timeout_s=30)
        count, errno = (int(part) for part in result.stdout.split())
        assert 10 < count < 64
        assert errno == 11
        assert (await box.exec("echo alive")).stdout == "alive\n"


_CRASHING_RUN = """
import asyncio, os, signal, sys
from looplab.sandbox import SandboxConfig
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

    from looplab.sandboxes.prune import prune

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
        left = client.containers.list(all=True, filters={"label": f"looplab.run={run_id}"})
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
    assert os.path.exists("/proc/self")
