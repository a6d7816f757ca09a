"""The sandbox contract: where an agent's tools run (design.md, "Sandboxes").

`Sandbox` is the one async interface; `sandboxes/local.py` and `sandboxes/docker.py`
implement it and `tests/conformance/test_sandbox_conformance.py` holds both to it.

- A command that exits non-zero, times out or floods its output is a *result*
  (`ExecResult`), never an exception. `SandboxError` (with the sandbox id) means the
  sandbox itself cannot do its job, or a path would leave the workspace.
- Exit codes: a command killed by signal N reports `128 + N` on every implementation (so a
  timeout, which kills with SIGKILL, reports 137 and `timed_out=True`).
- Output beyond `SandboxConfig.output_limit_bytes` per stream is dropped and a visible
  marker (`TRUNCATION_MARKER`) ends the kept text; bytes that are not UTF-8 decode with
  replacement characters.
- Every create, exec and close (and pool acquire) is timed as a `SandboxEvent` and handed
  to the optional `EventSink` given at creation.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Literal, Protocol, Self, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "DEFAULT_IMAGE",
    "IMAGE_ENV",
    "TRUNCATION_MARKER",
    "EventSink",
    "ExecResult",
    "Sandbox",
    "SandboxConfig",
    "SandboxEvent",
    "default_image",
    "parse_size",
]

TRUNCATION_MARKER = "\n[looplab: output truncated, {dropped} more bytes dropped]\n"

EventKind = Literal["create", "acquire", "exec", "close"]
DetailValue = str | int | float | bool | None


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one command in a sandbox.

    Attributes:
        exit_code: the command's exit status; `128 + N` when killed by signal N.
        stdout: standard output, decoded as UTF-8 with replacement, capped.
        stderr: standard error, decoded as UTF-8 with replacement, capped.
        duration_s: time from submitting the command to having its result (host clock).
        timed_out: the command ran past its timeout and was killed with its children.
        truncated: stdout or stderr went over the output limit and was cut.
    """

    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """True when the command exited 0 within its timeout."""
        return self.exit_code == 0 and not self.timed_out


@dataclass(frozen=True)
class SandboxEvent:
    """Timing of one sandbox operation, for the trace recorder.

    Attributes:
        kind: `create`, `acquire` (taken from a warm pool), `exec` or `close`.
        sandbox_id: id of the sandbox (container id prefix for Docker).
        sandbox_kind: `local` or `docker`.
        isolated: whether commands run isolated from the host (False: plain subprocess).
        started: `time.monotonic()` when the operation began.
        ended: `time.monotonic()` when it ended.
        wall_time: UTC wall time when it began.
        detail: small facts about the operation (command, exit code, bytes, ...).
    """

    kind: EventKind
    sandbox_id: str
    sandbox_kind: str
    isolated: bool
    started: float
    ended: float
    wall_time: datetime
    detail: Mapping[str, DetailValue] = field(default_factory=dict)

    @property
    def duration_s(self) -> float:
        """Seconds between start and end."""
        return self.ended - self.started


EventSink = Callable[[SandboxEvent], None]
"""Receives every SandboxEvent of a sandbox; must not block (called on the event loop)."""


MIN_SIZE = 16 * 1024 * 1024
"""Smallest memory / tmpfs size a sandbox accepts."""
MAX_SIZE = 64 * 1024**4
"""Largest size a sandbox accepts (64 TiB: beyond any host; far larger numbers overflow
the kernel's limits and the helper would die at start)."""

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_size(value: str | int) -> int:
    """Return a size in bytes from an int or a string like `512m`, `1g`, `1MiB`, `4096`.

    Raises:
        ValueError: the string is not a size, or the size is above `MAX_SIZE`.
    """
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.match(value) if len(value) <= 40 else None
        if not match:
            raise ValueError(f"not a size: {value[:40]!r} (examples: 4096, 512m, 1g)")
        number, unit = match.groups()
        size = int(float(number) * 1024 ** "bkmgt".index(unit.lower() or "b"))
    if size > MAX_SIZE:
        raise ValueError(f"{value!r} is more than the largest size, 64t")
    return size


DEFAULT_IMAGE = "looplab/sandbox:1"
"""The image `looplab sandbox build` makes (sandboxes/image.py `IMAGE_TAG`)."""
IMAGE_ENV = "LOOPLAB_SANDBOX_IMAGE"
"""Environment variable naming another default image (the test suite points it at a tag
that does not exist to check the docker tier is skipped without its image)."""


def default_image() -> str:
    """The docker sandbox image when a config names none: `IMAGE_ENV`, else `DEFAULT_IMAGE`."""
    return os.environ.get(IMAGE_ENV) or DEFAULT_IMAGE


class SandboxConfig(BaseModel):
    """How sandboxes are made: kind, image and limits (per experiment, overridable per task)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["local", "docker"] = "local"
    """`local`: a host workspace (bubblewrap-isolated where `bwrap` exists); `docker`."""
    image: str = Field(default_factory=default_image)
    """Docker image of a docker sandbox (built by `looplab sandbox build`); default
    `looplab/sandbox:1`, or the environment's `LOOPLAB_SANDBOX_IMAGE` when set."""
    network: Literal["none", "bridge"] = "none"
    """`none`: no network at all; `bridge`: a private network (docker) / the host's (local)."""
    publish_ports: list[int] = Field(default_factory=list)
    """Container ports to publish on 127.0.0.1 (docker, with network `bridge`)."""
    memory: str = "1g"
    """Memory limit, at least 16m (no `0`/unlimited). docker: the container's cgroup,
    workspace tmpfs included; local: one cgroup for the sandbox's process tree where the host
    lets looplab make one, else the address space of each process (the description says
    which)."""
    pids: int = Field(default=256, ge=8)
    """Maximum number of processes and threads (docker: the container; local: the sandbox's
    cgroup, else RLIMIT_NPROC, as its description says)."""
    cpus: float = Field(default=1.0, gt=0)
    """CPU quota in cores (docker only)."""
    workspace_size: str = "512m"
    """Size of the docker workspace tmpfs (charged to `memory`, with `tmp_size`: together
    they must stay below it, or a full workspace would OOM-kill the sandbox)."""
    tmp_size: str = "256m"
    """Size of the fresh tmpfs /tmp (both kinds)."""
    user: str = "1000:1000"
    """uid:gid commands run as in a docker sandbox; root (uid 0) needs `allow_root: true`."""
    allow_root: bool = False
    """Docker: let `user` be root (uid 0). Off by default: root in the container is one
    kernel bug away from root on the host."""
    output_limit_bytes: int = Field(default=1024 * 1024, ge=1)
    """Bytes kept per output stream of one command; the rest is dropped with a marker."""
    default_timeout_s: float = Field(default=60.0, gt=0)
    """Timeout of an exec that gives none."""
    pool_size: int = Field(default=0, ge=0)
    """Warm pool: sandboxes kept started ahead of need (0: none)."""
    isolation: Literal["auto", "bwrap", "none"] = "auto"
    """Local sandbox: `auto` uses bubblewrap where it exists; `bwrap` requires it; `none`
    runs commands uncontained on purpose (the explicit opt-in `looplab run` needs to run a
    real model or a wrapped agent on a host without bubblewrap; a warning is printed)."""
    local_python: Literal["project", "system"] = "project"
    """Local sandbox: `project` puts the Python environment looplab runs in (with pytest)
    first on PATH, mounted read-only, so tasks need nothing installed on the host;
    `system` uses the host's /usr/bin/python3 and whatever it has."""
    exec_mode: Literal["helper", "api"] = "helper"
    """Docker: `helper` sends commands to a long-lived in-container process (fast);
    `api` makes one Docker exec per command (slower; for comparison)."""

    @field_validator("memory", "workspace_size", "tmp_size")
    @classmethod
    def _is_size(cls, value: str) -> str:
        """Reject sizes that `parse_size` cannot read, and ones too small to run anything
        (`0` would mean "unlimited" to the engine and the kernel: refused)."""
        if parse_size(value) < MIN_SIZE:
            raise ValueError(f"{value!r} is below the minimum of 16m (there is no unlimited)")
        return value

    @field_validator("user")
    @classmethod
    def _is_user(cls, value: str) -> str:
        """`uid[:gid]` with numbers (names would be resolved inside the image, unchecked)."""
        uid, _, gid = value.partition(":")
        if not uid.isdigit() or (gid and not gid.isdigit()):
            raise ValueError(f"{value!r} is not uid:gid with numbers, e.g. 1000:1000")
        return value

    @model_validator(mode="after")
    def _root_is_opt_in(self) -> SandboxConfig:
        """uid 0 only with `allow_root: true`."""
        if int(self.user.partition(":")[0]) == 0 and not self.allow_root:
            raise ValueError("user 0 (root) needs allow_root: true")
        return self

    @model_validator(mode="after")
    def _tmpfs_fits_memory(self) -> SandboxConfig:
        """Docker: the workspace and /tmp tmpfs are charged to the container's memory limit,
        so together they must stay below `memory` (else filling them kills the helper)."""
        tmpfs = parse_size(self.workspace_size) + parse_size(self.tmp_size)
        if self.kind == "docker" and tmpfs >= parse_size(self.memory):
            raise ValueError(
                f"workspace_size ({self.workspace_size}) + tmp_size ({self.tmp_size}) must be "
                f"below memory ({self.memory}) for a docker sandbox: both tmpfs count against "
                "its memory limit, so a full workspace would OOM-kill the sandbox; lower "
                "workspace_size or raise memory"
            )
        return self


@runtime_checkable
class Sandbox(Protocol):
    """An isolated workspace with a shell, as an agent's tools see it.

    Implementations are created by their own async `create(...)` class method (or a
    `sandboxes.factory.open_sandbox`) with the task's files already copied in.
    """

    @property
    def id(self) -> str:
        """Stable id of this sandbox (used in errors and traces)."""
        ...

    @property
    def description(self) -> str:
        """One line saying what this sandbox is and how (or whether) it is isolated."""
        ...

    @property
    def isolated(self) -> bool:
        """False when commands run as plain host processes."""
        ...

    @property
    def workdir(self) -> str:
        """Absolute path of the workspace as commands in the sandbox see it."""
        ...

    async def exec(
        self,
        command: str | Sequence[str],
        *,
        timeout_s: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> ExecResult:
        """Run a command in the workspace and wait for it.

        Args:
            command: a shell command line (run by `sh -c`) or an argv list.
            timeout_s: seconds before the command and its children are killed; default
                `SandboxConfig.default_timeout_s`. The sandbox stays usable after.
            env: variables added to the sandbox's base environment.
            cwd: working directory relative to the workspace (default: its root).

        Returns:
            The exit code, capped output, duration and timeout/truncation flags.

        Raises:
            SandboxError: the sandbox is closed or broken, or `cwd` leaves the workspace.
        """
        ...

    async def read_file(self, path: str) -> bytes:
        """Return the bytes of a workspace file.

        Raises:
            SandboxError: the path leaves the workspace (`..`, absolute, symlink out).
            FileNotFoundError: there is no such file.
        """
        ...

    async def write_file(self, path: str, data: bytes | str) -> None:
        """Create or replace a workspace file (parents made as needed; str as UTF-8).

        Raises:
            SandboxError: the path leaves the workspace (`..`, absolute, symlink out).
        """
        ...

    async def list_files(self, path: str = ".") -> list[str]:
        """Return the files under a workspace directory, recursively, as sorted paths
        relative to the workspace root.

        Raises:
            SandboxError: the path leaves the workspace.
            FileNotFoundError: there is no such directory.
        """
        ...

    async def close(self) -> None:
        """Stop every process and remove the workspace; calling it again does nothing."""
        ...

    async def __aenter__(self) -> Self:
        """Return the sandbox itself."""
        ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the sandbox."""
        ...
