"""`DockerSandbox`: one container per sandbox, through the Docker API (socket or DOCKER_HOST).

The container's main process (under docker-init) is the helper of `_inside.py`, attached
over the API with stdin kept open once (`stdin_once`): commands and file operations are
framed requests on that one connection, so an exec costs a fork+exec in the container
instead of a Docker exec round (create/start/inspect + runc). `exec_mode: api` keeps the
Docker-exec path for comparison (`looplab bench sandbox`).

When the owner goes away in any way (close, Ctrl-C, crash, SIGKILL) the attach connection
closes, the helper sees EOF, kills its commands and exits, and the container, created with
auto-remove, disappears. Labels (`looplab=1`, experiment, run id, owner) let
`sandboxes.prune` find anything left by an engine that could not finish that.

Safe defaults (all from `SandboxConfig`): no network, every capability dropped,
no-new-privileges, uid 1000 (root only with `allow_root: true`), pids/memory/CPU limits,
read-only root filesystem with a tmpfs workspace and a tmpfs /tmp. A command that runs past
its timeout is killed with its whole tree, `setsid` children included (`_inside.py`), so
they cannot pile up against the pids limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from looplab.errors import SandboxError
from looplab.sandbox_contract import EventSink, ExecResult, SandboxConfig
from looplab.sandboxes._channel import (
    DockerFrames,
    HelperChannel,
    command_argv,
    decode_b64,
    encode_b64,
    file_request,
    run_command,
)
from looplab.sandboxes._container import (
    BASE_ENV,
    WORKDIR,
    exec_via_api,
    remove_container,
    start_container,
    tar_directory,
)
from looplab.sandboxes._paths import workspace_relative
from looplab.sandboxes._support import EventClock
from looplab.sandboxes.engine import connect_engine

if TYPE_CHECKING:
    import docker

__all__ = ["DockerSandbox", "default_client"]


@cache
def default_client() -> docker.DockerClient:
    """The process's shared engine client (made on first use).

    Raises:
        PrerequisiteError: no engine answers.
    """
    return connect_engine()


class DockerSandbox:
    """A container with a long-lived helper; see the module docstring."""

    kind = "docker"

    def __init__(
        self,
        *,
        container: Any,
        client: docker.DockerClient,
        channel: HelperChannel,
        attached: Any,
        config: SandboxConfig,
        clock: EventClock,
        published: dict[int, int] | None = None,
    ) -> None:
        """Use `DockerSandbox.create`; this only stores what it made."""
        self._published = dict(published or {})
        self._container = container
        self._client = client
        self._channel = channel
        self._attached = attached  # the SDK's socket object; the raw socket is inside
        self.config = config
        self._clock = clock
        self._closed = False
        self._id = str(container.id)[:12]

    @classmethod
    async def create(
        cls,
        task_dir: Path | None = None,
        *,
        config: SandboxConfig | None = None,
        sink: EventSink | None = None,
        experiment: str = "",
        run_id: str = "",
        client: docker.DockerClient | None = None,
    ) -> DockerSandbox:
        """Start a container and copy `task_dir` into its workspace.

        Args:
            task_dir: directory whose contents are copied into /workspace.
            config: image and limits; default `SandboxConfig(kind="docker")`.
            sink: receives the create/exec/close events.
            experiment: label `looplab.experiment`.
            run_id: label `looplab.run`.
            client: engine client; default `default_client()`.

        Returns:
            A ready sandbox.

        Raises:
            PrerequisiteError: no engine answers, or the image is missing.
            SandboxError: the container or its helper did not start.
        """
        config = config or SandboxConfig(kind="docker")
        begun = EventClock.start()
        engine: docker.DockerClient = (
            client if client is not None else await asyncio.to_thread(default_client)
        )
        container, attached, published = await asyncio.to_thread(
            start_container, engine, config, experiment, run_id
        )
        raw: socket.socket = getattr(attached, "_sock", attached)
        sandbox_id = str(container.id)[:12]
        reader, writer = await asyncio.open_connection(sock=raw)
        channel = HelperChannel(DockerFrames(reader).read_exactly, writer, sandbox_id=sandbox_id)
        sandbox = cls(
            container=container,
            client=engine,
            channel=channel,
            attached=attached,
            config=config,
            clock=EventClock(sink, "docker", True),
            published=published,
        )
        try:
            await channel.request("ping", wait_s=30.0)
            if task_dir is not None:
                archive = await asyncio.to_thread(tar_directory, task_dir)
                await channel.request("untar", wait_s=120.0, data=encode_b64(archive))
        except BaseException:
            await sandbox.close()
            raise
        sandbox._clock.emit("create", sandbox_id, begun, {"image": config.image})
        return sandbox

    @property
    def id(self) -> str:
        """The container id (12 hex digits)."""
        return self._id

    @property
    def isolated(self) -> bool:
        """Always True: commands run in the container."""
        return True

    @property
    def workdir(self) -> str:
        """`/workspace`."""
        return WORKDIR

    def published_port(self, port: int) -> int | None:
        """The 127.0.0.1 port of this host that reaches container port `port`.

        Returns:
            The host port, or None when `port` is not in `publish_ports` (or the network
            is `none`, where nothing is published).
        """
        return self._published.get(port)

    @property
    def description(self) -> str:
        """What the sandbox is and how it is isolated."""
        cfg = self.config
        return (
            f"docker sandbox {self._id} ({cfg.image}: network {cfg.network}, no capabilities, "
            f"uid {cfg.user}, {cfg.memory} memory, {cfg.pids} pids, {cfg.cpus:g} cpus, "
            "read-only root, tmpfs /workspace and /tmp)"
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
        relative = workspace_relative(cwd or ".", WORKDIR, sandbox_id=self.id)
        full_env = {**BASE_ENV, **(env or {})}
        timeout = timeout_s or self.config.default_timeout_s
        argv = command_argv(command)
        if self.config.exec_mode == "api":
            result = await asyncio.to_thread(
                exec_via_api,
                self._client,
                self._container,
                self.config,
                argv,
                timeout,
                full_env,
                f"{WORKDIR}/{relative}",
            )
        else:
            result = await run_command(
                self._channel,
                argv,
                timeout_s=timeout,
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
        """Stop the helper, kill and remove the container; idempotent."""
        if self._closed:
            return
        self._closed = True
        begun = EventClock.start()
        await self._channel.close()
        for closable in (getattr(self._attached, "_sock", self._attached), self._attached):
            with contextlib.suppress(OSError, AttributeError):
                closable.close()
        await asyncio.to_thread(remove_container, self._container)
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
        """One workspace file operation through the helper (`_channel.file_request`)."""
        self._check_open()
        return await file_request(self._channel, op, path, workdir=WORKDIR, **fields)

    def _check_open(self) -> None:
        """Raise SandboxError once closed."""
        if self._closed:
            raise SandboxError("sandbox is closed", sandbox_id=self.id)
