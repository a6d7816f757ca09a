"""Nothing left behind: limits that are refused, the kind registry, bubblewrap mount order,
owner-marked leftovers pruned after a kill -9, and processes a sandbox started stopped."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

from looplab.agents.services import stop_services
from looplab.errors import ConfigError
from looplab.sandbox_contract import SandboxConfig
from looplab.sandboxes._confine import bwrap_args
from looplab.sandboxes._inside_procs import OWNER_ENV, marked
from looplab.sandboxes.cgroup import SandboxCgroup, cgroup_plan
from looplab.sandboxes.factory import SANDBOX_KINDS, open_sandbox
from looplab.sandboxes.leftovers import OWNER_FILE, find_owned, owned_tempdir, prune_host
from looplab.sandboxes.local import LocalSandbox
from looplab.tasks import ServiceSpec


@pytest.mark.parametrize("size", ["0", "1m", "0g"])
def test_memory_zero_or_tiny_is_refused(size: str) -> None:
    """`memory: 0` would mean unlimited to the engine and the kernel: refused."""
    with pytest.raises(ValidationError, match="no unlimited"):
        SandboxConfig(memory=size)


def test_root_in_docker_needs_an_explicit_opt_in() -> None:
    """uid 0 is refused unless allow_root is set; names are refused (checked numbers only)."""
    for user in ("0:0", "0"):
        with pytest.raises(ValidationError, match="allow_root"):
            SandboxConfig(kind="docker", user=user)
    with pytest.raises(ValidationError, match="uid:gid"):
        SandboxConfig(kind="docker", user="root")
    assert SandboxConfig(kind="docker", user="0:0", allow_root=True).allow_root


def test_kind_registry_matches_the_config_values() -> None:
    """Every `SandboxConfig.kind` value has an opener, and an unknown kind lists them."""
    kinds = typing.get_args(SandboxConfig.model_fields["kind"].annotation)
    assert set(SANDBOX_KINDS) == set(kinds)
    bogus = SandboxConfig.model_construct(kind="firecracker")
    with pytest.raises(ConfigError, match="docker, local"):
        asyncio.run(open_sandbox(bogus))


def test_fresh_tmp_is_mounted_before_a_project_under_tmp(tmp_path: Path) -> None:
    """bubblewrap mounts in order: a /tmp tmpfs after the venv would hide a /tmp checkout."""
    args = bwrap_args(tmp_path, SandboxConfig(), as_root=False)
    tmpfs = next(i for i, a in enumerate(args) if a == "/tmp" and args[i - 1] == "--tmpfs")
    python = Path(sys.prefix).resolve()
    if python.parts[1] not in ("usr", "opt", "var"):
        binds = [i for i, a in enumerate(args) if a == str(python) and args[i - 1] == "--ro-bind"]
        assert binds and tmpfs < binds[0]
    as_root = bwrap_args(tmp_path, SandboxConfig(), as_root=True)
    assert "--unshare-user" not in as_root and "CAP_SETUID" in as_root


def test_owned_tempdirs_of_a_dead_owner_are_pruned(tmp_path: Path) -> None:
    """A marked directory whose owner process is gone is removed; a live owner's is kept."""
    mine = owned_tempdir("looplab-test-")
    try:
        orphan = tmp_path / "looplab-orphan"
        orphan.mkdir()
        (orphan / OWNER_FILE).write_text(f"{os.uname().nodename}:{_dead_pid()}:1")
        unmarked = tmp_path / "looplab-unmarked"
        unmarked.mkdir()
        pruned = prune_host(tmp_path)
        assert pruned.dirs == [str(orphan)] and unmarked.exists()
        assert str(mine) in find_owned(os.getpid()).dirs
    finally:
        shutil.rmtree(mine)


def test_processes_of_a_dead_owner_are_killed() -> None:
    """A process carrying a dead owner's marker (its run was kill -9ed) is killed by prune."""
    env = {**os.environ, OWNER_ENV: f"{os.uname().nodename}:{_dead_pid()}:1"}
    sleeper = subprocess.Popen(["sleep", "60"], env=env)
    try:
        assert sleeper.pid in prune_host().processes
        assert sleeper.wait(timeout=10) == -9
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.skipif(cgroup_plan().version == 0, reason="no writable cgroup on this host")
def test_cgroup_limits_and_removal() -> None:
    """A sandbox cgroup takes processes, kills them all and disappears."""
    group = SandboxCgroup.create(64 * 2**20, 16)
    assert isinstance(group, SandboxCgroup)
    sleeper = subprocess.Popen(["sleep", "60"])
    group.adopt([sleeper.pid])
    assert group.members() == {sleeper.pid}
    assert group.remove()
    assert sleeper.wait(timeout=10) == -9
    assert all(not path.exists() for path in group.paths)


async def test_unisolated_sandbox_close_kills_detached_processes() -> None:
    """Without bubblewrap, a `setsid` daemon (a task's server) dies with the sandbox."""
    box = await LocalSandbox.create(config=SandboxConfig(isolation="none"))
    marker = box._confinement.marker
    await box.exec("setsid sleep 600 >/dev/null 2>&1 < /dev/null & sleep 0.3")
    assert marked("LOOPLAB_SANDBOX", marker), "the daemon should run until close"
    await box.close()
    assert marked("LOOPLAB_SANDBOX", marker) == set()


@pytest.mark.parametrize("kind", ["local", pytest.param("docker", marks=pytest.mark.docker)])
async def test_services_stop_term_then_kill_verified(kind: str) -> None:
    """A service ignoring SIGTERM gets SIGKILL; both services' groups are gone after."""
    stubborn = (
        "python3 -c 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'"
    )
    specs = [
        ServiceSpec(name="polite", command="sleep 600", port=8001),
        ServiceSpec(name="stubborn", command=stubborn, port=8002),
    ]
    async with await open_sandbox(SandboxConfig(kind=kind)) as box:
        from looplab.agents.services import _LAUNCH

        for spec in specs:
            log, pid = f".services/{spec.name}.log", f".services/{spec.name}.pid"
            await box.exec(["python3", "-c", _LAUNCH, spec.command, log, pid])
        await asyncio.sleep(0.5)  # the stubborn one installs its handler
        forced = await stop_services(box, specs, grace_s=0.5)
        assert len(forced) == 1 and "needed SIGKILL" in forced[0]
        listing = (await box.exec(["ps", "-eo", "args"])).stdout.splitlines()
        assert [line for line in listing if "sleep 600" in line or "SIG_IGN" in line] == []


def _dead_pid() -> int:
    """The pid of a process that has exited (so an owner label naming it is stale)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid
