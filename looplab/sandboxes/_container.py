"""The engine side of `DockerSandbox` (`docker.py`): the container, blocking SDK calls.

`start_container` creates, attaches to and starts a container with the safe defaults of
`SandboxConfig` (docker.py's docstring lists them) and the helper of `_inside.py` as its
main process; `remove_container` kills and removes it; `exec_via_api` is the `api` exec
mode (one Docker exec per command, the baseline of `looplab bench sandbox`). Run these in
a thread: they block on the engine.
"""

from __future__ import annotations

import contextlib
import io
import json
import tarfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from looplab.errors import PrerequisiteError, SandboxError
from looplab.sandbox_contract import ExecResult, SandboxConfig, parse_size
from looplab.sandboxes._channel import helper_source
from looplab.sandboxes._seccomp import seccomp_programs
from looplab.sandboxes._support import CappedOutput
from looplab.sandboxes.owner import owner_label

if TYPE_CHECKING:
    import docker

__all__ = [
    "BASE_ENV",
    "WORKDIR",
    "exec_via_api",
    "remove_container",
    "start_container",
    "tar_directory",
]

WORKDIR = "/workspace"
BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/home/sandbox",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}


def start_container(
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
        remove_container(container)
        raise SandboxError(
            f"cannot start the sandbox container: {exc}", sandbox_id=container.short_id
        ) from exc
    return container, attached, published


def _helper_settings() -> str:
    """The helper's settings: markers only (the container's cgroup holds the limits)."""
    return json.dumps(
        {"marker": uuid.uuid4().hex, "owner": owner_label(), "seccomp": seccomp_programs()}
    )


def remove_container(container: Any) -> None:
    """Kill and remove a container, ignoring one that is already gone."""
    import docker as docker_sdk

    with contextlib.suppress(docker_sdk.errors.NotFound, docker_sdk.errors.APIError):
        container.remove(force=True)


def tar_directory(directory: Path) -> bytes:
    """A tar archive of a directory's contents (paths relative to it)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for entry in sorted(directory.iterdir()):
            tar.add(entry, arcname=entry.name)
    return buffer.getvalue()


def exec_via_api(
    client: docker.DockerClient,
    container: Any,
    config: SandboxConfig,
    argv: list[str],
    timeout_s: float,
    env: dict[str, str],
    workdir: str,
) -> ExecResult:
    """One Docker exec per command (the `api` mode); `timeout` kills its group."""
    started = time.perf_counter()
    api = client.api
    wrapped = ["timeout", "-s", "KILL", f"{timeout_s}", *argv]
    exec_id = api.exec_create(
        container.id, wrapped, environment=env, workdir=workdir, user=config.user
    )["Id"]
    out, err = (
        CappedOutput(config.output_limit_bytes),
        CappedOutput(config.output_limit_bytes),
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
