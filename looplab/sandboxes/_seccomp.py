"""No nested user namespaces in a local sandbox: a seccomp filter and bubblewrap's
`--disable-userns`.

A user namespace is the door to every other namespace (and to the kernel code only
namespace-root may reach), so a sandbox command must not make one. Two locks, used where
they exist:
- **a seccomp filter** (`user_namespace_filter`), given to bubblewrap as `--seccomp FD`
  and loaded right before the helper starts, so every command inherits it: `unshare` and
  `clone` with CLONE_NEWUSER fail with EPERM, `clone3` (whose flags a filter cannot read)
  fails with ENOSYS so libc falls back to `clone`, and system calls of a foreign ABI (x32,
  i386 on x86_64; 32-bit on arm64) fail with EPERM, since their numbers differ. Built for
  x86_64 and aarch64; on any other machine there is no filter. The same filter fails
  io_uring's calls with ENOSYS (io_uring does file and socket work outside the system
  calls a filter sees; Docker's default profile blocks it too).
- **`--disable-userns`** (bubblewrap >= 0.8, only with its own user namespace, i.e. when
  looplab is not root), probed once per process from `bwrap --help`.

`userns_lock(bwrap, as_root)` says which hold; `USERNS_OPEN` is the sentence a sandbox with
neither states in its description and logs as a warning.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import os
import platform
import struct
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "USERNS_OPEN",
    "UserNamespaceLock",
    "program_fd",
    "seccomp_programs",
    "user_namespace_filter",
    "userns_lock",
    "warn_userns_open",
]

USERNS_OPEN = (
    "nested user namespaces allowed (no seccomp filter for this machine, "
    "and this bubblewrap has no --disable-userns or looplab runs as root)"
)
CLONE_NEWUSER = 0x10000000
IO_URING = (425, 426, 427)
"""io_uring_setup, io_uring_enter, io_uring_register: one number on every Linux ABI."""
EPERM, ENOSYS = 1, 38

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO | errno
_X32_BIT = 0x40000000


@dataclass(frozen=True)
class _Abi:
    """One machine's audit arch and the system call numbers the filter checks."""

    arch: int
    unshare: int
    clone: int
    clone3: int
    x32: bool


_ABIS = {
    "x86_64": _Abi(arch=0xC000003E, unshare=272, clone=56, clone3=435, x32=True),
    "aarch64": _Abi(arch=0xC00000B7, unshare=97, clone=220, clone3=435, x32=False),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    """One `struct sock_filter` (native little-endian on both machines built for)."""
    return struct.pack("<HBBI", code, jt, jf, k)


def user_namespace_filter(machine: str | None = None) -> bytes | None:
    """The compiled BPF program (as `bwrap --seccomp` reads it), or None for a machine it
    is not built for. `machine` defaults to this one (`platform.machine()`).

    Besides user namespaces it fails io_uring's three calls with ENOSYS (as on a kernel
    without io_uring: its submissions run file and socket operations outside the system
    calls a filter can see, and programs that probe for it fall back to plain calls).
    """
    abi = _ABIS.get(machine or platform.machine())
    if abi is None:
        return None
    deny, nosys, allow = _ERRNO | EPERM, _ERRNO | ENOSYS, _ALLOW
    to_flags = (abi.unshare, abi.clone)  # allowed unless CLONE_NEWUSER is in arg0
    to_nosys = (abi.clone3, *IO_URING)
    # layout: ld arch | jeq arch | ret deny | ld nr | jge x32 -> DENY | jeq each of
    # to_flags -> FLAGS | jeq each of to_nosys -> NOSYS | ret allow | NOSYS: ret nosys
    # | FLAGS: ld arg0 | jset NEWUSER -> DENY | ret allow | DENY: ret deny
    first_jeq = 5
    nosys_at = first_jeq + len(to_flags) + len(to_nosys) + 1
    flags_at, deny_at = nosys_at + 1, nosys_at + 4
    program = [
        _insn(_LD_W_ABS, 4),  # seccomp_data.arch
        _insn(_JEQ_K, abi.arch, jt=1, jf=0),
        _insn(_RET_K, deny),
        _insn(_LD_W_ABS, 0),  # seccomp_data.nr
        _insn(_JGE_K, _X32_BIT if abi.x32 else 0xFFFFFFFF, jt=deny_at - 5, jf=0),
    ]
    for nr in to_flags:
        program.append(_insn(_JEQ_K, nr, jt=flags_at - len(program) - 1, jf=0))
    for nr in to_nosys:
        program.append(_insn(_JEQ_K, nr, jt=nosys_at - len(program) - 1, jf=0))
    program += [
        _insn(_RET_K, allow),
        _insn(_RET_K, nosys),
        _insn(_LD_W_ABS, 16),  # low 32 bits of seccomp_data.args[0]: the flags
        _insn(_JSET_K, CLONE_NEWUSER, jt=1, jf=0),  # -> DENY
        _insn(_RET_K, allow),
        _insn(_RET_K, deny),
    ]
    assert len(program) == deny_at + 1
    return b"".join(program)


def seccomp_programs() -> dict[str, str]:
    """The filter for every machine it is built for, base64 by `uname -m`: the Docker
    helper loads the one of the engine's machine on top of Docker's own profile (which
    leaves io_uring open on some engines), since a remote engine may be another machine."""
    programs = {machine: user_namespace_filter(machine) for machine in _ABIS}
    return {m: base64.b64encode(p).decode() for m, p in programs.items() if p is not None}


@functools.cache
def supports_disable_userns(bwrap: str) -> bool:
    """True when this bubblewrap has `--disable-userns` (0.8+); asked once per path."""
    try:
        shown = subprocess.run(
            [bwrap, "--help"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return "--disable-userns" in shown.stdout + shown.stderr


@dataclass(frozen=True)
class UserNamespaceLock:
    """What keeps a local sandbox's commands from making user namespaces.

    Attributes:
        program: the seccomp filter to load, or None (no filter for this machine).
        disable_userns: pass `--disable-userns` (bubblewrap has it and makes a user
            namespace, i.e. looplab is not root).
    """

    program: bytes | None
    disable_userns: bool

    @property
    def closed(self) -> bool:
        """True when at least one lock holds."""
        return self.program is not None or self.disable_userns

    @property
    def text(self) -> str:
        """In words, for the sandbox's description."""
        how = ["seccomp"] if self.program is not None else []
        how += ["--disable-userns"] if self.disable_userns else []
        return f"no nested user namespaces ({' + '.join(how)})" if how else USERNS_OPEN


def userns_lock(bwrap: str, *, as_root: bool) -> UserNamespaceLock:
    """The locks this host and this bubblewrap allow (see the module docstring)."""
    disable = not as_root and supports_disable_userns(bwrap)
    return UserNamespaceLock(user_namespace_filter(), disable)


@functools.cache
def warn_userns_open() -> None:
    """Print the one `WARNING:` line (once per process) that sandboxes here have no lock."""
    print(f"WARNING: local sandbox: {USERNS_OPEN}", file=sys.stderr)


@contextlib.contextmanager
def program_fd(program: bytes | None) -> Iterator[int | None]:
    """An open, rewound in-memory file holding `program` (None for no program), closed on
    exit; pass it to the child (`pass_fds`) and name it in `--seccomp`."""
    if program is None:
        yield None
        return
    fd = os.memfd_create("looplab-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)
