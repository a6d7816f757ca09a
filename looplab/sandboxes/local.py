"""`LocalSandbox`: a temporary workspace on this host, the embedded default.

Where `bwrap` (bubblewrap) exists, one long-lived helper (`_inside.py`) runs inside a
bubblewrap sandbox made once per LocalSandbox: new pid, net, ipc, uts and cgroup
namespaces (no network unless `network: bridge`), the system directories read-only, no
/home, /root, /run (so no Docker socket), a fresh tmpfs /tmp, the workspace writable at
/workspace, no capabilities, an unprivileged user (`_confine.py` says which and how), no
nested user namespaces (`_seccomp.py`), and `--die-with-parent` so the whole tree dies
with the owner. Commands start from that helper
(about a fork+exec each); a timeout kills the command's whole tree.

Limits: where this process may make cgroups (`cgroup.py`), the sandbox's whole process
tree shares one memory limit and one pids limit; where it may not, memory is capped per
process (address space) and processes per user namespace (RLIMIT_NPROC), and the
description (also in the trace's sandbox `create` event) says exactly that.

Without bwrap the helper is a plain host process in the workspace: the sandbox then says
it is *not isolated*, in `description` and in its events. In every mode, closing the
sandbox kills every process it started (detached ones too: they carry its marker) and
deletes the workspace, and the workspace's directory carries an owner marker so that a
run killed with SIGKILL leaves nothing `looplab sandbox prune` cannot find.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from looplab.errors import PrerequisiteError, SandboxError
from looplab.sandbox_contract import EventSink, ExecResult, SandboxConfig
from looplab.sandboxes._channel import (
    HelperChannel,
    command_argv,
    decode_b64,
    encode_b64,
    file_request,
    run_command,
)
from looplab.sandboxes._confine import (
    SANDBOX_WORKDIR,
    Confinement,
    chown_tree,
    visible_system_dirs,
)
from looplab.sandboxes._paths import workspace_relative
from looplab.sandboxes._seccomp import program_fd
from looplab.sandboxes._stderr import StderrTail
from looplab.sandboxes._support import EventClock
from looplab.sandboxes.leftovers import owned_tempdir

__all__ = ["LocalSandbox", "find_bwrap", "isolation_gap"]

STANDARD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def find_bwrap() -> str | None:
    """bubblewrap's path on PATH, or None (the one lookup every caller shares)."""
    return shutil.which("bwrap")


def isolation_gap(config: SandboxConfig) -> str | None:
    """What a local sandbox made with `config` would not contain on this host, or None
    when bubblewrap isolates it (`isolation: auto` with bwrap on PATH, or `bwrap`).

    The sentence names who commands run as and what they can reach, so a person reading a
    run's first lines knows what an agent's command could do to this machine.
    """
    if config.isolation == "bwrap" or (config.isolation == "auto" and find_bwrap()):
        return None
    why = "sandbox.isolation is none" if config.isolation == "none" else "no bwrap on PATH"
    uid = os.geteuid()
    who = "root" if uid == 0 else f"uid {uid}"
    docker = " and the Docker socket" if Path("/var/run/docker.sock").exists() else ""
    return (
        f"local sandbox NOT CONTAINED ({why}): agent commands run as {who} on this host, "
        f"with its network, every file {who} may read or write{docker}; "
        "limits on processes, memory and output still hold"
    )


class LocalSandbox:
    """A workspace directory on this host; commands isolated by bubblewrap where it exists."""

    kind = "local"

    def __init__(
        self,
        *,
        home: Path,
        root: Path,
        process: asyncio.subprocess.Process,
        channel: HelperChannel,
        config: SandboxConfig,
        clock: EventClock,
        confinement: Confinement,
    ) -> None:
        """Use `LocalSandbox.create`; this only stores what it made."""
        self._home = home
        self._root = root
        self._process = process
        self._channel = channel
        self.config = config
        self._clock = clock
        self._confinement = confinement
        self._closed = False
        self._id = f"local-{process.pid}"

    @classmethod
    async def create(
        cls,
        task_dir: Path | None = None,
        *,
        config: SandboxConfig | None = None,
        sink: EventSink | None = None,
    ) -> LocalSandbox:
        """Make a workspace (a copy of `task_dir`) and start the sandbox's helper.

        Args:
            task_dir: directory whose contents are copied into the workspace.
            config: limits and isolation; default `SandboxConfig()`.
            sink: receives the create/exec/close events.

        Returns:
            A ready sandbox.

        Raises:
            PrerequisiteError: `isolation: bwrap` but bubblewrap is missing, or no python3.
            SandboxError: the helper did not start.
        """
        config = config or SandboxConfig()
        begun = EventClock.start()
        bwrap = find_bwrap()
        if config.isolation == "bwrap" and bwrap is None:
            raise PrerequisiteError(
                "isolation 'bwrap' needs bubblewrap", fix="apt-get install -y bubblewrap"
            )
        python = shutil.which("python3", path=STANDARD_PATH)
        if python is None:
            raise PrerequisiteError(
                "the local sandbox needs python3 in /usr/bin", fix="apt-get install -y python3"
            )
        bwrap = bwrap if config.isolation != "none" else None
        home, confinement, process = await _start(config, task_dir, bwrap, python)
        stderr = StderrTail(process.stderr)
        root = home / "workspace"
        assert process.stdin is not None
        assert process.stdout is not None
        channel = HelperChannel(
            process.stdout.readexactly, process.stdin, sandbox_id=f"local-{process.pid}"
        )
        sandbox = cls(
            home=home,
            root=root,
            process=process,
            channel=channel,
            config=config,
            clock=EventClock(sink, "local", bwrap is not None),
            confinement=confinement,
        )
        try:
            await channel.request("ping", wait_s=30.0)
            await asyncio.to_thread(confinement.adopt, process.pid)
        except SandboxError as exc:
            said = await stderr.said(process)
            await sandbox.close()
            if not said:
                raise
            raise SandboxError(
                f"sandbox helper did not start: {said}", sandbox_id=sandbox.id
            ) from exc
        except BaseException:
            await sandbox.close()
            raise
        sandbox._clock.emit("create", sandbox.id, begun, {"description": sandbox.description})
        return sandbox

    @property
    def id(self) -> str:
        """`local-<pid of the helper>`."""
        return self._id

    @property
    def isolated(self) -> bool:
        """True when commands run inside bubblewrap."""
        return self._confinement.bwrap is not None

    @property
    def workdir(self) -> str:
        """`/workspace` under bubblewrap, else the host directory."""
        return SANDBOX_WORKDIR if self.isolated else str(self._root)

    @property
    def description(self) -> str:
        """What the sandbox is, how it is isolated, and what is and is not limited."""
        limits = self._confinement.limits()
        if self.isolated:
            net = "no network" if self.config.network == "none" else "host network"
            return (
                f"local sandbox (bubblewrap: {net}; the host's {visible_system_dirs()} "
                "read-only (their world-readable files are visible), writable /workspace (a "
                "host directory: its disk use is NOT bounded), fresh /tmp; no /home, /root, "
                f"/run or /var; {self._confinement.user_text()}, file tools run inside as "
                "that user and follow no symlink, no io_uring, no capabilities, dies with "
                f"its owner; {limits})"
            )
        return (
            f"local sandbox NOT ISOLATED: plain subprocesses in {self._root} "
            f"(install bubblewrap to isolate; {limits})"
        )

    async def exec(
        self,
        command: str | Sequence[str],
        *,
        timeout_s: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> ExecResult:
        """Run a command in the workspace (see `looplab.sandbox_contract.Sandbox.exec`)."""
        self._check_open()
        begun = EventClock.start()
        relative = workspace_relative(cwd or ".", self.workdir, sandbox_id=self.id)
        full_env = _base_env(self._home / "home", bwrap=self.isolated, config=self.config)
        full_env.update(env or {})
        result = await run_command(
            self._channel,
            command_argv(command),
            timeout_s=timeout_s or self.config.default_timeout_s,
            env=full_env,
            cwd=str(relative),
            output_limit=self.config.output_limit_bytes,
        )
        self._clock.emit(
            "exec",
            self.id,
            begun,
            {
                "command": command if isinstance(command, str) else " ".join(command),
                "exit_code": result.exit_code,
                "timed_out": result.timed_out,
                "truncated": result.truncated,
            },
        )
        return result

    async def read_file(self, path: str) -> bytes:
        """Return a workspace file's bytes (see `Sandbox.read_file`)."""
        reply = await self._file_request("read", path)
        return decode_b64(reply["data"])

    async def write_file(self, path: str, data: bytes | str) -> None:
        """Create or replace a workspace file (see `Sandbox.write_file`)."""
        payload = data.encode() if isinstance(data, str) else data
        await self._file_request("write", path, data=encode_b64(payload))

    async def list_files(self, path: str = ".") -> list[str]:
        """Return the workspace files under `path` (see `Sandbox.list_files`)."""
        reply = await self._file_request("list", path)
        return [str(name) for name in reply["files"]]

    async def close(self) -> None:
        """Stop the helper and every process it started, delete the workspace; idempotent.

        Verified: the cgroup (if any) is empty and removed, and no process carrying this
        sandbox's marker is left (detached services of an unisolated sandbox included).
        """
        if self._closed:
            return
        self._closed = True
        begun = EventClock.start()
        await self._channel.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            await self._process.wait()
        await asyncio.to_thread(self._confinement.release)
        await asyncio.to_thread(shutil.rmtree, self._home, True)
        self._clock.emit("close", self.id, begun)

    async def __aenter__(self) -> Self:
        """Return the sandbox."""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the sandbox."""
        await self.close()

    async def _file_request(self, op: str, path: str, **fields: Any) -> dict[str, Any]:
        """One workspace file operation, done by the helper inside the sandbox as its user
        (`_channel.file_request`): the host never opens a workspace path."""
        self._check_open()
        return await file_request(self._channel, op, path, workdir=self.workdir, **fields)

    def _check_open(self) -> None:
        """Raise SandboxError once closed."""
        if self._closed:
            raise SandboxError("sandbox is closed", sandbox_id=self.id)


async def _start(
    config: SandboxConfig, task_dir: Path | None, bwrap: str | None, python: str
) -> tuple[Path, Confinement, asyncio.subprocess.Process]:
    """Make the owner-marked workspace and the confinement, and start the helper; on any
    failure (cancellation included) undo what was made."""
    home = owned_tempdir("looplab-sandbox-")
    root = home / "workspace"
    try:
        confinement = Confinement.make(config, bwrap)  # no await: nothing made can be lost
    except BaseException:
        shutil.rmtree(home, ignore_errors=True)
        raise
    try:
        if task_dir is not None:
            await asyncio.to_thread(shutil.copytree, task_dir, root, symlinks=True)
        else:
            root.mkdir()
        (home / "home").mkdir()
        if confinement.user is not None:
            await asyncio.to_thread(chown_tree, root, *confinement.user)
        program = None if confinement.userns is None else confinement.userns.program
        with program_fd(program) as seccomp:
            process = await asyncio.create_subprocess_exec(
                *confinement.argv(python, root, seccomp),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,  # bwrap's own words on a failed start
                cwd=root,
                env=_base_env(home / "home", bwrap=bwrap is not None, config=config),
                start_new_session=True,
                pass_fds=() if seccomp is None else (seccomp,),
            )
    except BaseException:
        confinement.release()
        shutil.rmtree(home, ignore_errors=True)
        raise
    return home, confinement, process


def _base_env(home: Path, *, bwrap: bool, config: SandboxConfig) -> dict[str, str]:
    """The environment every command starts from (nothing of the host's leaks in)."""
    env = {
        "PATH": STANDARD_PATH,
        "LANG": "C.UTF-8",
        "HOME": "/tmp" if bwrap else str(home),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    if config.local_python == "project":
        env["PATH"] = f"{Path(sys.prefix) / 'bin'}:{STANDARD_PATH}"
        # looplab's own environment carries pytest plugins (hypothesis, langsmith, xdist,
        # asyncio...) that a task's tests do not use; loading them took 1.7 s of every
        # `pytest` a task ran (0.16 s without), counted as tool time. The Docker image's
        # pytest has none either.
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env
