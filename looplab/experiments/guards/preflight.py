"""What a run needs from the machine, checked before its first cell (and by `looplab doctor`).

Each check says whether the piece is there, whether this run needs it, and the fix:

| check      | needed when                                   | looked at                         |
|------------|-----------------------------------------------|-----------------------------------|
| chromium   | a web task, or `agent.browse_via: browser`    | `looplab.chromium.find_chromium`  |
| docker     | `sandbox.kind: docker`                        | an engine answering a ping        |
| bubblewrap | never required here (reported for the local   | `bwrap` on PATH                   |
|            | sandbox; containment policy is the sandbox's) |                                   |
| disk       | always: `MIN_FREE_BYTES` free where traces go | `shutil.disk_usage`               |
| ports      | always: the simulator and services bind       | a loopback TCP bind on port 0     |

`preflight` raises one `PrerequisiteError` naming every missing piece a run needs, with
its fix, so a run that would fail at cell 8 fails before cell 1. The probes are injected
(`Probes`), so a missing piece can be shown without uninstalling it.
"""

from __future__ import annotations

import shutil
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from looplab.chromium import INSTALL_FIX, find_chromium
from looplab.errors import PrerequisiteError, SandboxError

if TYPE_CHECKING:
    from looplab.experiments.config import ExperimentConfig

__all__ = [
    "MIN_FREE_BYTES",
    "Check",
    "Needs",
    "Probes",
    "needs_of",
    "preflight",
    "require_extras",
    "run_checks",
]

MIN_FREE_BYTES = 1 << 30
"""Free disk space a run needs where it writes (1 GiB: traces, task workspaces and the
index take well under this; less means a run may stop half-way)."""


def _docker() -> str | None:
    """None when an engine answers, else why not."""
    try:
        from looplab.sandboxes.engine import connect_engine

        connect_engine(timeout_s=5.0)
    except (PrerequisiteError, SandboxError, ImportError) as exc:
        return str(exc).split("\n")[0]
    return None


def _loopback() -> str | None:
    """None when a loopback TCP port can be bound, else the error."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _free_bytes(path: Path) -> int:
    """Free bytes on the file system `path` (or its first existing parent) is on."""
    target = path.resolve()
    while not target.exists() and target != target.parent:
        target = target.parent
    return shutil.disk_usage(target).free


@dataclass(frozen=True)
class Probes:
    """How each piece is looked for (defaults: the real machine)."""

    chromium: Callable[[], str | None] = find_chromium
    docker: Callable[[], str | None] = _docker
    bwrap: Callable[[], str | None] = lambda: shutil.which("bwrap")
    free_bytes: Callable[[Path], int] = _free_bytes
    loopback: Callable[[], str | None] = _loopback


@dataclass(frozen=True)
class Needs:
    """What a run needs (`looplab doctor`: everything optional, nothing required)."""

    browser: bool = False
    docker: bool = False
    output: Path = field(default_factory=Path.cwd)


@dataclass(frozen=True)
class Check:
    """One row of the preflight: the piece, found or not, needed or not, and the fix."""

    name: str
    ok: bool
    needed: bool
    detail: str
    fix: str = ""
    used_for: str = ""

    @property
    def blocking(self) -> bool:
        """Missing and needed by this run."""
        return self.needed and not self.ok


def run_checks(needs: Needs, probes: Probes | None = None) -> list[Check]:
    """Every check of the module's table, in its order."""
    probe = probes or Probes()
    chromium = probe.chromium()
    docker = probe.docker() if needs.docker else None
    bwrap = probe.bwrap()
    free = probe.free_bytes(needs.output)
    port = probe.loopback()
    return [
        Check(
            "chromium",
            chromium is not None,
            needs.browser,
            chromium or "not found (web tasks and browse_via: browser need it)",
            INSTALL_FIX,
            "web tasks, browse_via: browser",
        ),
        Check(
            "docker",
            docker is None,
            needs.docker,
            "engine answers"
            if needs.docker and docker is None
            else docker or "not checked: this run uses no docker sandbox",
            "start dockerd (apt-get install -y docker.io) or set DOCKER_HOST",
            "sandbox.kind: docker",
        ),
        Check(
            "bubblewrap",
            bwrap is not None,
            False,
            bwrap or "not found: local sandbox commands are not isolated",
            "apt-get install -y bubblewrap",
            "isolating the local sandbox",
        ),
        Check(
            "disk",
            free >= MIN_FREE_BYTES,
            True,
            f"{free / (1 << 30):.1f} GiB free at {needs.output} (needs 1 GiB)",
            "free disk space or set output_dir elsewhere",
            "every run",
        ),
        Check(
            "ports",
            port is None,
            True,
            "loopback TCP bind works" if port is None else f"cannot bind 127.0.0.1: {port}",
            "allow loopback TCP (the simulator and task services listen on 127.0.0.1)",
            "every run",
        ),
    ]


def needs_of(experiment: ExperimentConfig, tasks: Sequence[str], output: Path) -> Needs:
    """What a run of `experiment`'s `tasks` needs (web tasks or browser browsing: Chromium;
    a docker sandbox: an engine)."""
    browser = experiment.agent.browse_via == "browser" or any(t.startswith("web/") for t in tasks)
    return Needs(browser=browser, docker=experiment.sandbox.kind == "docker", output=output)


def preflight(needs: Needs, probes: Probes | None = None) -> list[Check]:
    """`run_checks`, raising when a needed piece is missing.

    Raises:
        PrerequisiteError: every missing needed piece with its fix, in one message.
    """
    checks = run_checks(needs, probes)
    blocking = [c for c in checks if c.blocking]
    if blocking:
        raise PrerequisiteError(
            "missing before the first cell: "
            + "; ".join(f"{c.name}: {c.detail}" for c in blocking),
            fix=" | ".join(f"{c.name}: {c.fix}" for c in blocking),
        )
    return checks


def require_extras(experiment: Any) -> None:
    """The package extras the experiment needs (agents, store; docker, ray by config).

    Raises:
        PrerequisiteError: one is not installed, naming the pip command that installs it.
    """
    from looplab.extras import require

    require("agents", "looplab run")
    require("store", "looplab run")
    if experiment.sandbox.kind == "docker":
        require("docker", "a docker sandbox")
    if experiment.executor.kind == "ray":
        require("ray", "executor kind ray")
