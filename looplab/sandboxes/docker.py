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
import io
import json
import socket
import tarfile
import uuid
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from looplab.errors import PrerequisiteError, SandboxError
from looplab.sandbox import EventSink, ExecResult, SandboxConfig, parse_size
from looplab.sandboxes._channel import (
    DockerFrames,
    HelperChannel,
    command_argv,
    decode_b64,
    encode_b64,
    helper_source,
    run_command,
)
from looplab.sandboxes._paths import workspace_relative
from looplab.sandboxes._support import CappedOutput, EventClock
from looplab.sandboxes.engine import connect_engine
from looplab.sandboxes.owner import owner_label

if TYPE_CHECKING:
    import docker

__all__ = ["DockerSandbox", "default_client"]

WORKDIR = "/workspace"
BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/home/sandbox",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}


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
            _start_container, engine, config, experiment, run_id
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
                archive = await asyncio.to_thread(_tar_directory, task_dir)
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
        """Run a command in the workspace (see `looplab.sandbox.Sandbox.exec`)."""
        self._check_open()
        begun = EventClock.start()
        relative = workspace_relative(cwd or ".", WORKDIR, sandbox_id=self.id)
        full_env = {**BASE_ENV, **(env or {})}
        timeout = timeout_s or self.config.default_timeout_s
        argv = command_argv(command)
        if self.config.exec_mode == "api":
            result = await asyncio.to_thread(
                self._exec_api, argv, timeout, full_env, f"{WORKDIR}/{relative}"
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
        await asyncio.to_thread(_remove_container, self._container)
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
        """Send a file operation for a lexically checked path (the helper checks links)."""
        self._check_open()
        relative = workspace_relative(path, WORKDIR, sandbox_id=self.id)
        return await self._channel.request(op, wait_s=120.0, path=str(relative), **fields)

    def _exec_api(
        self, argv: list[str], timeout_s: float, env: dict[str, str], workdir: str
    ) -> ExecResult:
        """One Docker exec per command (the `api` mode); `timeout` kills its group."""
        import time

        started = time.perf_counter()
        api = self._client.api
        wrapped = ["timeout", "-s", "KILL", f"{timeout_s}", *argv]
        exec_id = api.exec_create(
            self._container.id, wrapped, environment=env, workdir=workdir, user=self.config.user
        )["Id"]
        out, err = (
            CappedOutput(self.config.output_limit_bytes),
            CappedOutput(self.config.output_limit_bytes),
        )
        for chunk_out, chunk_err in api.exec_start(exec_id, stream=True, demux=True):
            if chunk_out:
                out.feed(chunk_out)
            if chunk_err:
                err.feed(chunk_err)
        code = int(api.exec_inspect(exec_id)["ExitCode"])
        return ExecResult(
            exit_code=code,
            stdout=out.text(),
            stderr=err.text(),
            duration_s=time.perf_counter() - started,
            timed_out=code == 137 and time.perf_counter() - started >= timeout_s,
            truncated=bool(out.dropped or err.dropped),
        )

    def _check_open(self) -> None:
        """Raise SandboxError once closed."""
        if self._closed:
            raise SandboxError("sandbox is closed", sandbox_id=self.id)


def _start_container(
    client: docker.DockerClient, config: SandboxConfig, experiment: str, run_id: str
) -> tuple[Any, Any, dict[int, int]]:
    """Create the container, attach to its stdio, start it (blocking; run in a thread).

    Returns:
        The container, the attach socket, and host port by published container port.
    """
    import docker as docker_sdk

    memory = parse_size(config.memory)
    uid, _, gid = config.user.partition(":")
    # published on 127.0.0.1 only, on a host port the engine picks
    ports: dict[str, int | list[int] | tuple[str, int] | None] = {
        f"{port}/tcp": ("127.0.0.1", 0) for port in config.publish_ports
    }
    try:
        container = client.containers.create(
            config.image,
            command=["python3", "-c", helper_source(), "serve", _helper_settings()],
            init=True,
            stdin_open=True,
            detach=False,  # with stdin_open: StdinOnce, so EOF reaches the helper
            auto_remove=True,
            user=config.user,
            working_dir=WORKDIR,
            environment=BASE_ENV,
            network_mode=config.network,
            ports=ports or None,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            pids_limit=config.pids,
            mem_limit=memory,
            memswap_limit=memory,
            nano_cpus=int(config.cpus * 1e9),
            read_only=True,
            tmpfs={
                "/tmp": f"rw,exec,nosuid,nodev,size={parse_size(config.tmp_size)}",
                WORKDIR: (
                    f"rw,exec,nosuid,nodev,size={parse_size(config.workspace_size)},"
                    f"uid={uid},gid={gid or uid},mode=0755"
                ),
            },
            labels={
                "looplab": "1",
                "looplab.experiment": experiment,
                "looplab.run": run_id,
                "looplab.owner": owner_label(),
            },
        )
    except docker_sdk.errors.ImageNotFound as exc:
        raise PrerequisiteError(
            f"the sandbox image {config.image} is not there", fix="looplab sandbox build"
        ) from exc
    except docker_sdk.errors.APIError as exc:
        raise SandboxError(f"cannot create a container of {config.image}: {exc}") from exc
    try:
        params = {"stdin": 1, "stdout": 1, "stream": 1}
        attached = client.api.attach_socket(str(container.id), params=params)
        container.start()
        published: dict[int, int] = {}
        if ports and config.network != "none":
            container.reload()  # the engine picks the host ports at start
            for key, bindings in (container.ports or {}).items():
                for binding in bindings or []:
                    if binding.get("HostIp") == "127.0.0.1":
                        published[int(str(key).split("/")[0])] = int(binding["HostPort"])
    except Exception as exc:
        _remove_container(container)
        raise SandboxError(
            f"cannot start the sandbox container: {exc}", sandbox_id=container.short_id
        ) from exc
    return container, attached, published


def _helper_settings() -> str:
    """The helper's settings: markers only (the container's cgroup holds the limits)."""
    return json.dumps({"marker": uuid.uuid4().hex, "owner": owner_label()})


def _remove_container(container: Any) -> None:
    """Kill and remove a container, ignoring one that is already gone."""
    import docker as docker_sdk

    with contextlib.suppress(docker_sdk.errors.NotFound, docker_sdk.errors.APIError):
        container.remove(force=True)


def _tar_directory(directory: Path) -> bytes:
    """A tar archive of a directory's contents (paths relative to it)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for entry in sorted(directory.iterdir()):
            tar.add(entry, arcname=entry.name)
    return buffer.getvalue()
