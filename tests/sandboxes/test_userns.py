"""No nested user namespaces: the seccomp filter and `--disable-userns`, each on its own,
for the non-root way bubblewrap is run (the root way is a probe in
tests/reliability/test_containment.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from looplab.sandbox_contract import SandboxConfig
from looplab.sandboxes._confine import bwrap_args
from looplab.sandboxes._seccomp import (
    USERNS_OPEN,
    UserNamespaceLock,
    program_fd,
    supports_disable_userns,
    user_namespace_filter,
)

NOBODY = "65534"


def test_filter_is_built_for_known_machines_only() -> None:
    """x86_64 and aarch64 get a 17-instruction program; another machine gets none."""
    for machine in ("x86_64", "aarch64"):
        program = user_namespace_filter(machine)
        assert program is not None and len(program) == 17 * 8
    assert user_namespace_filter("riscv64") is None


def test_description_names_the_locks_or_the_gap() -> None:
    """The sandbox's description says which lock holds, or that none does."""
    assert UserNamespaceLock(b"x", True).text == (
        "no nested user namespaces (seccomp + --disable-userns)"
    )
    assert UserNamespaceLock(None, False).text == USERNS_OPEN
    assert not UserNamespaceLock(None, False).closed


def test_disable_userns_only_with_a_user_namespace(tmp_path: Path) -> None:
    """`--disable-userns` is passed only on the non-root way (bubblewrap refuses it
    without `--unshare-user`); `--seccomp FD` on both."""
    config = SandboxConfig(kind="local")
    plain = bwrap_args(tmp_path, config, as_root=False, disable_userns=True, seccomp_fd=7)
    root = bwrap_args(tmp_path, config, as_root=True, disable_userns=True, seccomp_fd=7)
    assert "--disable-userns" in plain and "--disable-userns" not in root
    assert root[root.index("--seccomp") + 1] == "7"


def _as_nobody(*, disable: bool, program: bytes | None) -> str:
    """Run `unshare -U true` in bubblewrap as uid 65534 (the non-root way); its stdout."""
    with tempfile.TemporaryDirectory(prefix="looplab-userns-") as where:
        workspace = Path(where)  # pytest's tmp_path is private to root: nobody cannot bind it
        os.chown(workspace, int(NOBODY), int(NOBODY))
        return _run_as_nobody(workspace, disable=disable, program=program)


def _run_as_nobody(workspace: Path, *, disable: bool, program: bytes | None) -> str:
    """`_as_nobody` in a workspace uid 65534 owns."""
    config = SandboxConfig(kind="local", local_python="system")
    with program_fd(program) as fd:
        args = bwrap_args(workspace, config, as_root=False, disable_userns=disable, seccomp_fd=fd)
        drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        shell = "unshare -U true 2>/dev/null; echo $?; sh -c 'echo child'"
        done = subprocess.run(
            [*drop, "bwrap", *args, "sh", "-c", shell],
            capture_output=True,
            text=True,
            timeout=30,
            pass_fds=() if fd is None else (fd,),
            check=False,
        )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.bwrap
@pytest.mark.parametrize("lock", ["none", "seccomp", "disable-userns"])
def test_each_lock_alone_stops_unshare(lock: str) -> None:
    """Without a lock `unshare -U` succeeds (the control); with either one it fails and
    ordinary processes still start."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run bubblewrap as another user")
    if lock == "disable-userns" and not supports_disable_userns(shutil.which("bwrap") or "bwrap"):
        pytest.skip("this bubblewrap has no --disable-userns (0.8+)")
    program = user_namespace_filter() if lock == "seccomp" else None
    if lock == "seccomp" and program is None:
        pytest.skip("no seccomp filter for this machine")
    out = _as_nobody(disable=lock == "disable-userns", program=program)
    assert out == ("0\nchild\n" if lock == "none" else "1\nchild\n")


def test_no_lock_on_another_machine_as_root_is_said_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a machine without a filter, as root (no `--disable-userns`), the lock says
    nested user namespaces are allowed, and the warning line is printed once."""
    from looplab.sandboxes import _seccomp

    monkeypatch.setattr("platform.machine", lambda: "riscv64")
    lock = _seccomp.userns_lock("bwrap", as_root=True)
    assert not lock.closed and lock.text == USERNS_OPEN
    _seccomp.warn_userns_open.cache_clear()
    _seccomp.warn_userns_open()
    _seccomp.warn_userns_open()
    assert capsys.readouterr().err == f"WARNING: local sandbox: {USERNS_OPEN}\n"
