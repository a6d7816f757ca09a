"""How a local sandbox is confined: bubblewrap arguments, the sandbox user, its limits.

`Confinement` is made once per `LocalSandbox`: it builds the helper's command line, moves
the helper into the sandbox's cgroup once it runs, describes what is limited and how, and
at close kills (and checks it killed) every process of the sandbox.

Two ways, by who runs looplab:
- **as a normal user**: bubblewrap makes a user namespace in which commands run as uid
  1000; on the host they are this user, so nothing they can read is beyond what the user
  can read (and /home, /root, /run are not mounted).
- **as root**: a user namespace would map the sandbox's uid to host root, and root-only
  host files under the mounted /etc (/etc/shadow) would be readable (/var, with
  /var/lib/docker, is not mounted at all). So bubblewrap runs without one, keeps only
  CAP_SETUID/CAP_SETGID, and the helper drops to `nobody` (65534) with
  no-new-privileges before it serves anything; the workspace is owned by that user.

Mount order matters: the fresh /tmp is mounted before the project's Python environment,
so a checkout (and its .venv) under /tmp stays visible inside the sandbox. The directories
above that environment are made traverse-only (`PARENT_MODE`): a clone in a home directory
(root's included) shows its path, never the home's other entries.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from looplab.sandbox_contract import SandboxConfig, parse_size
from looplab.sandboxes._channel import helper_source
from looplab.sandboxes._inside_procs import SANDBOX_ENV, kill_until_gone, marked, tree_of
from looplab.sandboxes._seccomp import UserNamespaceLock, userns_lock, warn_userns_open
from looplab.sandboxes.cgroup import SandboxCgroup
from looplab.sandboxes.owner import owner_label

__all__ = [
    "DROPPED_USER",
    "PARENT_MODE",
    "SANDBOX_WORKDIR",
    "SYSTEM_DIRS",
    "Confinement",
    "bwrap_args",
    "chown_tree",
    "nproc_per_namespace",
    "project_python_dirs",
]

SANDBOX_WORKDIR = "/workspace"
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt")
"""Host directories visible (read-only) inside bubblewrap; homes, /run, /tmp and /var stay
out (/var holds host state: logs, caches, spools, other programs' data)."""
PARENT_MODE = "0111"
"""Mode of the directories made inside the sandbox above the project's Python environment
(e.g. /root for a clone in root's home): anyone may pass through them to the environment,
nobody may list them, so where the clone lives shows nothing of its neighbours."""
DROPPED_USER = (65534, 65534)
"""uid, gid (nobody, nogroup) that sandbox commands run as when looplab runs as root."""


def project_python_dirs() -> list[Path]:
    """The running interpreter's environment and its base installation (read-only mounts)."""
    dirs = [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
    system = tuple(Path("/", name) for name in SYSTEM_DIRS)
    unique = [d for i, d in enumerate(dirs) if d not in dirs[:i]]
    return [d for d in unique if not any(d == s or s in d.parents for s in system)]


def visible_system_dirs() -> str:
    """The host directories a bubblewrap sandbox shows read-only, as text (`/usr, /etc`)."""
    shown = [f"/{name}" for name in SYSTEM_DIRS if Path("/", name).exists()]
    return ", ".join(shown)


def bwrap_args(
    root: Path,
    config: SandboxConfig,
    *,
    as_root: bool,
    disable_userns: bool = False,
    seccomp_fd: int | None = None,
) -> list[str]:
    """bubblewrap arguments: read-only system, writable /workspace, fresh /tmp, no net,
    no nested user namespaces (`--disable-userns`, and the filter read from `seccomp_fd`)."""
    args = ["--tmpfs", "/"]
    for name in SYSTEM_DIRS:
        host = Path("/", name)
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    args += ["--dev", "/dev", "--proc", "/proc"]
    args += ["--perms", "1777", "--size", str(parse_size(config.tmp_size)), "--tmpfs", "/tmp"]
    args += ["--dir", "/var", "--symlink", "/tmp", "/var/tmp"]  # no host /var; /var/tmp works
    if config.local_python == "project":  # after /tmp: a checkout under /tmp must stay visible
        made = {Path("/"), Path("/tmp"), *(Path("/", name) for name in SYSTEM_DIRS)}
        for directory in project_python_dirs():
            for parent in reversed(directory.parents):
                if parent not in made:  # traversable, not listable: no host names shown
                    args += ["--perms", PARENT_MODE, "--dir", str(parent)]
                    made.add(parent)
            args += ["--ro-bind", str(directory), str(directory)]
    args += ["--bind", str(root), SANDBOX_WORKDIR, "--remount-ro", "/"]
    if as_root:
        args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if config.network == "none":
            args.append("--unshare-net")
        # the helper needs these to empty the bounding set and drop to DROPPED_USER, which
        # then clears every capability
        args += ["--cap-drop", "ALL"]
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"):
            args += ["--cap-add", cap]
    else:
        args += ["--unshare-all", "--unshare-user", "--uid", "1000", "--gid", "1000"]
        if config.network != "none":
            args.append("--share-net")
        args += ["--cap-drop", "ALL"]
        if disable_userns:
            args.append("--disable-userns")
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--die-with-parent", "--new-session", "--chdir", SANDBOX_WORKDIR]
    return args


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """Give `path` and everything under it (symlinks themselves, not their targets) to uid:gid."""
    os.lchown(path, uid, gid)
    for folder, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(folder, name), uid, gid)


def nproc_per_namespace() -> bool:
    """True when RLIMIT_NPROC counts per user namespace (Linux >= 5.14), not per host user."""
    release = os.uname().release.split(".")
    try:
        major, minor = int(release[0]), int(release[1].split("-")[0])
    except (IndexError, ValueError):
        return False
    return (major, minor) >= (5, 14)


@dataclass
class Confinement:
    """One local sandbox's isolation and limits (see the module docstring).

    Attributes:
        config: the sandbox's config.
        bwrap: path of bubblewrap, or None (not isolated).
        user: uid, gid commands run as when looplab runs as root (None: no change).
        cgroup: the sandbox's cgroup, or why there is none.
        nproc: RLIMIT_NPROC given to the helper when no cgroup limits pids (0: none).
        userns: what keeps commands from making user namespaces (None: no bubblewrap).
        marker: the `LOOPLAB_SANDBOX` value of every process of this sandbox.
    """

    config: SandboxConfig
    bwrap: str | None
    user: tuple[int, int] | None
    cgroup: SandboxCgroup | str
    nproc: int
    userns: UserNamespaceLock | None = None
    marker: str = field(default_factory=lambda: uuid.uuid4().hex)

    @classmethod
    def make(cls, config: SandboxConfig, bwrap: str | None) -> Confinement:
        """Decide the user and limits, and make the cgroup where the host allows one."""
        as_root = bwrap is not None and os.geteuid() == 0
        cgroup = SandboxCgroup.create(parse_size(config.memory), config.pids)
        nproc = 0
        if isinstance(cgroup, str) and bwrap is not None and (as_root or nproc_per_namespace()):
            nproc = config.pids
        userns = None if bwrap is None else userns_lock(bwrap, as_root=as_root)
        if userns is not None and not userns.closed:
            warn_userns_open()
        return cls(config, bwrap, DROPPED_USER if as_root else None, cgroup, nproc, userns)

    def argv(self, python: str, root: Path, seccomp_fd: int | None = None) -> list[str]:
        """The command line that starts the helper (inside bubblewrap when there is one);
        `seccomp_fd` is an open file holding `self.userns.program` (bubblewrap reads it)."""
        settings = {
            "marker": self.marker,
            "owner": owner_label(),
            "memory": parse_size(self.config.memory),
            "nproc": self.nproc,
            "user": None if self.user is None else f"{self.user[0]}:{self.user[1]}",
        }
        helper = [python, "-c", helper_source(), "serve", json.dumps(settings)]
        if self.bwrap is None:
            return helper
        disable = self.userns is not None and self.userns.disable_userns
        args = bwrap_args(
            root,
            self.config,
            as_root=self.user is not None,
            disable_userns=disable,
            seccomp_fd=seccomp_fd,
        )
        return [self.bwrap, *args, *helper]

    def adopt(self, pid: int) -> None:
        """Move the started helper's process tree (`pid` and below) into the cgroup.

        A refusal leaves the sandbox without a cgroup (and says so in `limits`).
        """
        if isinstance(self.cgroup, SandboxCgroup):
            try:
                self.cgroup.adopt(sorted(tree_of(pid) | {pid}))
            except OSError as exc:
                self.cgroup.remove()
                self.cgroup = f"the kernel refused to move it into a cgroup ({exc.strerror})"

    def release(self) -> set[int]:
        """Kill every process of the sandbox and remove its cgroup; returns survivors' pids."""
        if isinstance(self.cgroup, SandboxCgroup):
            self.cgroup.remove()
        return kill_until_gone(lambda: marked(SANDBOX_ENV, self.marker))

    def limits(self) -> str:
        """What is limited and how, and what is not, in words."""
        memory, pids = self.config.memory, self.config.pids
        if isinstance(self.cgroup, SandboxCgroup):
            how = self.cgroup.description
            return f"memory {memory} for the whole process tree and {pids} pids ({how})"
        text = f"memory {memory} per process (address space), no total memory limit"
        if self.nproc and self.user is not None:
            text += f", {pids} processes for uid {self.user[0]} host-wide (RLIMIT_NPROC)"
        elif self.nproc:
            text += f", {pids} processes (RLIMIT_NPROC, per user namespace)"
        else:
            text += ", no pids limit"
        return f"{text}: {self.cgroup}"

    def user_text(self) -> str:
        """Who commands run as, and whether they may make user namespaces, in words."""
        if self.user is None:
            who = "uid 1000 in a user namespace (this user on the host)"
        else:
            who = f"uid {self.user[0]} (nobody; looplab runs as root, which is dropped)"
        return who if self.userns is None else f"{who}, {self.userns.text}"
