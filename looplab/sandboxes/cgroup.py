"""A control group per local sandbox: a memory limit for its whole process tree and a pids limit.

Where the host lets this process make child cgroups (root, or a delegated cgroup v2
subtree), a local sandbox's helper is moved into its own cgroup right after it starts, so
everything it runs shares one memory limit (`memory.max`, or `memory.limit_in_bytes` on
cgroup v1, swap included where the kernel accounts it) and one pids limit (`pids.max`).
Where it cannot, `SandboxCgroup.create` returns the reason instead, and the sandbox says in
its description what is not limited.

Cgroups are named `looplab.<owner pid>.<owner start ticks>.<n>` under this process's own
cgroup, so `stale_cgroups` finds those of owners that are gone (a kill -9) for prune.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from looplab.sandboxes.owner import owner_gone, owner_label

__all__ = ["CgroupPlan", "SandboxCgroup", "cgroup_plan", "owned_cgroups", "stale_cgroups"]

_PREFIX = "looplab."
_counter = itertools.count()


@dataclass(frozen=True)
class CgroupPlan:
    """Where sandbox cgroups go on this host, or why they cannot.

    Attributes:
        version: 2 or 1 (0 when none is usable).
        parents: directories the sandbox cgroups are made under (one per v1 controller).
        reason: why there are none (empty when there are).
    """

    version: int
    parents: tuple[Path, ...]
    reason: str = ""


def _mounts() -> tuple[Path | None, dict[str, Path]]:
    """The cgroup2 mount and the v1 mounts of the memory and pids controllers."""
    v2: Path | None = None
    v1: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, extra = left.split(), right.split()
            if len(fields) < 5 or len(extra) < 3:
                continue
            point = Path(fields[4])
            if extra[0] == "cgroup2":
                v2 = point
            elif extra[0] == "cgroup":
                for controller in ("memory", "pids"):
                    if controller in extra[2].split(","):
                        v1[controller] = point
    return v2, v1


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per controller (`""` for the v2 unified hierarchy)."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths


def cgroup_plan() -> CgroupPlan:
    """Find where this process may make limited cgroups (v2 first, then v1)."""
    v2, v1 = _mounts()
    own = _own_paths()
    reasons = []
    if v2 is not None and "" in own:
        here = v2 / own[""].lstrip("/")
        controllers = _read(here / "cgroup.controllers").split()
        if not {"memory", "pids"} <= set(controllers) or not os.access(here, os.W_OK):
            reasons.append(f"cgroup v2 {here} is not writable with memory+pids")
        elif {"memory", "pids"} <= set(_read(here / "cgroup.subtree_control").split()) or _write(
            here / "cgroup.subtree_control", "+memory +pids"
        ):
            return CgroupPlan(2, (here,))
        else:
            reasons.append(f"cgroup v2 {here} cannot delegate memory+pids (it holds processes)")
    if {"memory", "pids"} <= set(v1) and {"memory", "pids"} <= set(own):
        parents = tuple(v1[c] / own[c].lstrip("/") for c in ("memory", "pids"))
        if all(os.access(p, os.W_OK) for p in parents):
            return CgroupPlan(1, parents)
        reasons.append("cgroup v1 memory/pids hierarchies are not writable")
    return CgroupPlan(0, (), "; ".join(reasons) or "no cgroup memory+pids controllers mounted")


class SandboxCgroup:
    """One sandbox's cgroup(s): made with limits, given processes, killed and removed."""

    def __init__(self, version: int, paths: list[Path]) -> None:
        """Use `SandboxCgroup.create`."""
        self.version = version
        self.paths = paths

    @classmethod
    def create(cls, memory_bytes: int, pids: int) -> SandboxCgroup | str:
        """Make the cgroup with its limits, or return why it cannot be made."""
        plan = cgroup_plan()
        if plan.version == 0:
            return plan.reason
        rest = owner_label().partition(":")[2]
        name = f"{_PREFIX}{rest.replace(':', '.')}.{next(_counter)}"
        paths = [parent / name for parent in plan.parents]
        group = cls(plan.version, [])
        try:
            for path in paths:
                path.mkdir()
                group.paths.append(path)
            group._limit(memory_bytes, pids)
        except OSError as exc:
            group.remove()
            return f"cannot make a cgroup under {plan.parents[0]}: {exc.strerror}"
        return group

    def _limit(self, memory_bytes: int, pids: int) -> None:
        if self.version == 2:
            (path,) = self.paths
            (path / "memory.max").write_text(str(memory_bytes))
            _write(path / "memory.swap.max", "0")
            (path / "pids.max").write_text(str(pids))
            return
        memory, pid_group = self.paths
        (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
        _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
        (pid_group / "pids.max").write_text(str(pids))

    @property
    def description(self) -> str:
        """`cgroup v1` / `cgroup v2`."""
        return f"cgroup v{self.version}"

    def adopt(self, pids: list[int]) -> None:
        """Move processes into the cgroup (each hierarchy).

        Raises:
            OSError: the kernel refused (the caller then tears the sandbox down).
        """
        for path in self.paths:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    (path / "cgroup.procs").write_text(str(pid))

    def members(self) -> set[int]:
        """Processes in the cgroup now."""
        found: set[int] = set()
        for path in self.paths:
            found |= {int(p) for p in _read(path / "cgroup.procs").split()}
        return found

    def kill(self, wait_s: float = 5.0) -> set[int]:
        """SIGKILL every member until none is left; returns the survivors after `wait_s`."""
        if self.version == 2 and self.paths:
            _write(self.paths[0] / "cgroup.kill", "1")  # kernel >= 5.14; the loop covers older
        deadline = time.monotonic() + wait_s
        while (left := self.members()) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        return self.members()

    def remove(self) -> bool:
        """Kill what is left and delete the cgroup(s); True when they are gone."""
        self.kill()
        gone = True
        for path in self.paths:
            for _ in range(100):  # rmdir is refused until exiting tasks are reaped
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
            gone = gone and not path.exists()
        return gone


def owned_cgroups() -> list[Path]:
    """Every sandbox cgroup directory under this process's cgroup(s)."""
    found: list[Path] = []
    for parent in cgroup_plan().parents:
        with contextlib.suppress(OSError):
            found += [c for c in parent.iterdir() if c.is_dir() and c.name.startswith(_PREFIX)]
    return sorted(found)


def stale_cgroups() -> list[SandboxCgroup]:
    """Sandbox cgroups of this host whose owner process is gone."""
    plan = cgroup_plan()
    host = owner_label().partition(":")[0]
    by_name: dict[str, list[Path]] = {}
    for child in owned_cgroups():
        by_name.setdefault(child.name, []).append(child)
    stale = []
    for name, paths in sorted(by_name.items()):
        parts = name.split(".")
        if len(parts) == 4 and owner_gone(f"{host}:{parts[1]}:{parts[2]}"):
            stale.append(SandboxCgroup(plan.version, paths))
    return stale


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, text: str) -> bool:
    try:
        path.write_text(text)
    except OSError:
        return False
    return True
