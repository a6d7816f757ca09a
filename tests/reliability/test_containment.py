"""Containment probes: what a command in a sandbox must not be able to do, for both kinds
(docker, and local with bubblewrap).

Each probe is a small attack run inside a sandbox with tight limits (256 MiB, 64 pids); it
passes when the attack is contained and the sandbox still works afterwards. A local
sandbox that cannot get a cgroup (no writable cgroup on the host) states in its
description that it has no total memory limit or no pids limit; those probes are then
skipped with that statement as the reason (the README says when this happens and why).
"""

from __future__ import annotations

import asyncio
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from looplab.errors import SandboxError
from looplab.sandbox_contract import Sandbox, SandboxConfig
from looplab.sandboxes.factory import open_sandbox

pytestmark = [pytest.mark.reliability]

needs_bwrap = pytest.mark.bwrap
KINDS = [
    pytest.param("local", marks=needs_bwrap),
    pytest.param("docker", marks=pytest.mark.docker),
]
PIDS = 64


@pytest.fixture(params=KINDS)
async def sandbox(request: pytest.FixtureRequest) -> AsyncIterator[Sandbox]:
    """An isolated sandbox with small limits (256 MiB, 64 pids)."""
    config = SandboxConfig(
        kind=request.param,
        memory="256m",
        pids=PIDS,
        isolation="auto",
        workspace_size="96m",  # docker: the tmpfs count against memory and must fit below it
        tmp_size="64m",
    )
    box = await open_sandbox(config)
    assert box.isolated
    yield box
    await box.close()


async def _no_network(box: Sandbox) -> None:
    probe = (
        "import socket\n"
        "print(sorted(n for _, n in socket.if_nameindex()))\n"
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "try:\n    s.connect(('192.0.2.1', 9)); print('routed')\n"
        "except OSError as exc:\n    print('unreachable', exc.errno)\n"
    )
    result = await box.exec(["python3", "-c", probe])
    assert result.stdout.splitlines() == ["['lo']", "unreachable 101"]


async def _no_root_only_host_files(box: Sandbox) -> None:
    result = await box.exec(
        "cat /etc/shadow >/dev/null 2>&1 && echo shadow; "
        "ls /var/lib/docker >/dev/null 2>&1 && echo docker-data; "
        "ls /root 2>/dev/null | head -1; "
        "test -S /run/docker.sock -o -S /var/run/docker.sock && echo docker-socket; true"
    )
    assert result.stdout == ""


async def _unprivileged(box: Sandbox) -> None:
    result = await box.exec("id -u; grep -E 'Cap(Eff|Prm|Bnd)' /proc/self/status")
    uid, *caps = result.stdout.split()
    assert uid != "0"
    assert caps == ["CapPrm:", "0" * 16, "CapEff:", "0" * 16, "CapBnd:", "0" * 16]


async def _read_only_system(box: Sandbox) -> None:
    result = await box.exec(
        "for d in /etc /usr /; do touch $d/looplab-probe 2>/dev/null && echo wrote $d; done; "
        "touch /tmp/probe && touch probe && echo ok"
    )
    assert result.stdout == "ok\n"


async def _timeout_kills_the_whole_tree(box: Sandbox) -> None:
    started = time.perf_counter()
    result = await box.exec(
        "setsid sleep 301 & setsid sh -c 'sleep 302 & sleep 303' & (sleep 304 &) ; sleep 300",
        timeout_s=1,
    )
    assert result.timed_out and result.exit_code == 137
    assert time.perf_counter() - started < 8
    left = await box.exec(
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"
    )
    assert "sleep 30" not in left.stdout


async def _setsid_children_cannot_exhaust_pids(box: Sandbox) -> None:
    spawner = "for i in $(seq 20); do setsid sleep 600 & done; sleep 600"
    for _ in range(5):  # 100 detached sleepers in all: over the limit unless each dies
        assert (await box.exec(spawner, timeout_s=0.5)).timed_out
    assert (await box.exec("echo alive")).stdout == "alive\n"


def _limited(box: Sandbox, what: str) -> None:
    """Skip a probe of a limit the sandbox says (in its description) it does not have."""
    text = box.description
    if f"no {what} limit" in text:
        pytest.skip(f"this host gives the local sandbox no {what} limit: {text}")


async def _pids_limit(box: Sandbox) -> None:
    _limited(box, "pids")
    spawner = textwrap.dedent(
        """
        import subprocess
        children = []
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        try:
            for _ in range(500):
                children.append(subprocess.Popen(["sleep", "20"], **quiet))
        except OSError as exc:
            print(len(children), exc.errno)
        else:
            print(len(children), 0)
        for child in children:
            child.kill()
            child.wait()
        """
    )
    result = await box.exec(["python3", "-c", spawner], timeout_s=30)
    count, errno = (int(part) for part in result.stdout.split())
    assert 10 < count < PIDS
    assert errno == 11
    assert (await box.exec("echo alive")).stdout == "alive\n"


async def _memory_hog(box: Sandbox) -> None:
    hog = "chunks = []\nwhile True:\n    chunks.append(bytearray(64 * 1024 * 1024))\n"
    result = await box.exec(["python3", "-c", hog], timeout_s=30)
    assert not result.timed_out
    assert result.exit_code == 137 or "MemoryError" in result.stderr
    assert (await box.exec("echo alive")).stdout == "alive\n"


async def _total_memory(box: Sandbox) -> None:
    _limited(box, "total memory")
    three = textwrap.dedent(
        """
        import subprocess, sys
        one = ("import time; b = bytearray(120 * 2**20); "
               "b[::4096] = b'x' * (len(b) // 4096); time.sleep(2)")
        procs = [subprocess.Popen([sys.executable, "-c", one]) for _ in range(3)]
        print(sum(p.wait() == 0 for p in procs))
        """
    )
    result = await box.exec(["python3", "-c", three], timeout_s=60)
    assert int(result.stdout.strip() or 0) < 3  # 3 x 120 MiB cannot all fit in 256 MiB
    assert (await box.exec("echo alive")).stdout == "alive\n"


async def _no_nested_user_namespace(box: Sandbox) -> None:
    probe = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "made = libc.unshare(0x10000000) == 0\n"  # CLONE_NEWUSER
        "print('made' if made else f'refused {ctypes.get_errno()}')\n"
    )
    result = await box.exec(["python3", "-c", probe])
    assert result.stdout.startswith("refused "), result.stdout
    shell = await box.exec("unshare -U true 2>/dev/null && echo made; unshare -Ur true 2>&1")
    assert "made" not in shell.stdout, shell.stdout
    assert (await box.exec("echo alive")).stdout == "alive\n"


async def _no_io_uring(box: Sandbox) -> None:
    probe = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "params = ctypes.create_string_buffer(120)\n"  # struct io_uring_params, zeroed
        "fd = libc.syscall(425, 4, params)\n"  # io_uring_setup(4 entries)
        "print('made' if fd >= 0 else f'refused {os.strerror(ctypes.get_errno())}')\n"
    )
    result = await box.exec(["python3", "-c", probe])
    assert result.stdout.startswith("refused "), result.stdout  # ENOSYS local, EPERM docker


async def _no_host_var(box: Sandbox) -> None:
    marker = Path("/var/tmp") / f"looplab-probe-{uuid.uuid4().hex}"
    marker.write_text("host state")
    marker.chmod(0o644)
    try:
        result = await box.exec(f"cat {marker} 2>/dev/null; ls /var/log /var/lib 2>/dev/null; true")
    finally:
        marker.unlink()
    assert "host state" not in result.stdout
    if getattr(box, "kind", "") == "local":
        assert result.stdout == ""


async def _fork_bomb_leaves_the_helper_serving(box: Sandbox) -> None:
    _limited(box, "pids")
    bomb = await box.exec("bomb() { bomb | bomb & }; bomb; sleep 30", timeout_s=3)
    assert bomb.timed_out or bomb.exit_code != 0  # at the limit even `sleep` may not start
    refusals = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # it answers again once the killed tree frees pids
        try:
            if (await box.exec("echo alive", timeout_s=5)).stdout == "alive\n":
                return
        except SandboxError as exc:  # at the limit: refused with the reason, never gone
            refusals.append(str(exc))
        await asyncio.sleep(0.5)
    raise AssertionError(f"the helper never answered again after the fork bomb: {refusals}")


PROBES: dict[str, Callable[[Sandbox], Awaitable[None]]] = {
    "no network": _no_network,
    "no root-only host files, no docker socket, no /root": _no_root_only_host_files,
    "unprivileged, no capabilities": _unprivileged,
    "read-only system": _read_only_system,
    "timeout kills setsid children": _timeout_kills_the_whole_tree,
    "setsid children cannot exhaust pids": _setsid_children_cannot_exhaust_pids,
    "pids limit": _pids_limit,
    "memory hog stopped": _memory_hog,
    "total memory of the tree": _total_memory,
    "no nested user namespaces": _no_nested_user_namespace,
    "no io_uring": _no_io_uring,
    "no host /var": _no_host_var,
    "a fork bomb leaves the helper serving": _fork_bomb_leaves_the_helper_serving,
}


@pytest.mark.parametrize("probe", sorted(PROBES))
async def test_probe(sandbox: Sandbox, campaign: Any, probe: str) -> None:
    """The attack is contained and the sandbox still answers afterwards."""
    kind = str(getattr(sandbox, "kind", "?"))
    try:
        await PROBES[probe](sandbox)
    except pytest.skip.Exception:
        campaign.notes.append(f"{kind}: '{probe}' not applicable on this host")
        raise
    except BaseException:
        campaign.probe(kind, False)
        raise
    campaign.probe(kind, True)
