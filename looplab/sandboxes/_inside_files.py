"""The in-sandbox helper's workspace file operations: every path opened beneath the
workspace's directory fd, never through a symlink (issue 43).

Part of the helper's source (`_channel.helper_source` joins `_inside_procs.py`,
`_inside_files.py` and `_inside.py`, dropping their `from looplab.` lines): stdlib only,
no side effects on import. `set_root(fd)` names the workspace before the first operation.
"""

import contextlib
import errno
import os
import stat


class Refused(Exception):
    """A request that names a path outside the workspace, or through a symlink."""


_root: dict[str, int] = {"fd": -1}


def set_root(fd: int) -> None:
    """The workspace's directory fd, beneath which every operation opens its path."""
    _root["fd"] = fd


_OPENAT2 = 437  # the same number on every Linux ABI
_RESOLVE = 0x02 | 0x04 | 0x08  # RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH
_openat2_state: dict[str, object] = {"usable": None}


def _parts(relative: str) -> list[str]:
    """The components of a workspace-relative path (`..` is refused, `.` dropped)."""
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise Refused(f"path {relative!r} climbs out of the workspace with '..'")
    return parts


def _openat2(dirfd: int, path: str, flags: int, mode: int) -> int | None:
    """openat2(dirfd, path, RESOLVE_BENEATH | NO_SYMLINKS | NO_MAGICLINKS), or None where
    this kernel (or a seccomp filter, or a Python without ctypes) does not offer it."""
    if _openat2_state["usable"] is False:
        return None
    try:
        import ctypes

        class OpenHow(ctypes.Structure):
            _fields_ = [
                ("flags", ctypes.c_uint64),
                ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64),
            ]

        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
    except (ImportError, OSError):
        _openat2_state["usable"] = False
        return None
    how = OpenHow(flags, mode if flags & os.O_CREAT else 0, _RESOLVE)
    for _ in range(64):  # EAGAIN: a rename raced the lookup; the kernel asks for a retry
        fd = int(
            libc.syscall(
                ctypes.c_long(_OPENAT2),
                ctypes.c_int(dirfd),
                ctypes.c_char_p(os.fsencode(path)),
                ctypes.byref(how),
                ctypes.c_size_t(ctypes.sizeof(how)),
            )
        )
        if fd >= 0:
            _openat2_state["usable"] = True
            return fd
        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EPERM, errno.E2BIG) and not _openat2_state["usable"]:
            _openat2_state["usable"] = False
            return None
        if err != errno.EAGAIN:
            raise OSError(err, os.strerror(err), path)
    return None  # renames kept racing it: the component walk below is just as safe


def _walk(dirfd: int, parts: list[str], *, create: bool) -> int:
    """A new fd of the directory `parts` beneath `dirfd`, one component at a time, each
    opened with O_NOFOLLOW | O_DIRECTORY (made first when `create`)."""
    current = os.dup(dirfd)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=current)
            following = os.open(
                part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=current
            )
            os.close(current)
            current = following
    except BaseException:
        os.close(current)
        raise
    return current


def open_beneath(relative: str, flags: int, *, create_parents: bool = False) -> int:
    """Open a workspace path without following any symlink or leaving the workspace.

    The one way a file operation reaches a workspace path: relative to the workspace's
    directory fd, by `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`
    where the kernel has it, else an O_NOFOLLOW walk component by component; so a process
    that swaps a folder for a symlink between a check and the open wins nothing (there is
    no separate check). `create_parents` makes missing folders (always by the walk).

    Raises:
        Refused: the path climbs out, or any of its components is a symlink.
        FileNotFoundError: a component is missing.
    """
    parts = _parts(relative)
    flags |= os.O_NOFOLLOW | os.O_CLOEXEC
    root_fd = _root["fd"]
    try:
        if not parts:
            return os.open(".", flags, dir_fd=root_fd)
        if not create_parents:
            fd = _openat2(root_fd, "/".join(parts), flags, 0o666)
            if fd is not None:
                return fd
        parent = _walk(root_fd, parts[:-1], create=create_parents)
        try:
            return os.open(parts[-1], flags, 0o666, dir_fd=parent)
        finally:
            os.close(parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EXDEV) or (
            exc.errno == errno.ENOTDIR and _through_link(root_fd, parts)
        ):
            raise Refused(
                f"path {relative!r} goes through a symlink: file operations follow no symlink "
                "(one could point outside the workspace)"
            ) from None
        if exc.errno == errno.ENOTDIR:
            raise FileNotFoundError(f"not a directory on the way to {relative!r}") from None
        raise


def _through_link(root_fd: int, parts: list[str]) -> bool:
    """Whether a component of `parts` is a symlink (O_DIRECTORY | O_NOFOLLOW on a link says
    ENOTDIR, not ELOOP); only for the wording of the error, so a race here opens nothing."""
    current = os.dup(root_fd)
    try:
        for part in parts:
            mode = os.stat(part, dir_fd=current, follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                return True
            if not stat.S_ISDIR(mode):
                return False
            following = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=current)
            os.close(current)
            current = following
    except OSError:
        return False
    finally:
        os.close(current)
    return False


def _regular(fd: int, relative: str) -> None:
    """Refuse anything but a regular file (a FIFO or device would block or reach out)."""
    kind = os.fstat(fd).st_mode
    if stat.S_ISDIR(kind):
        raise FileNotFoundError(f"no such file in the workspace: {relative} (a directory)")
    if not stat.S_ISREG(kind):
        raise Refused(f"path {relative!r} is not a regular file")


def read_file(relative: str) -> bytes:
    """The bytes of a regular workspace file (see `open_beneath`)."""
    fd = open_beneath(relative, os.O_RDONLY | os.O_NONBLOCK)
    try:
        _regular(fd, relative)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_file(relative: str, data: bytes) -> None:
    """Create or replace a workspace file, making missing folders (see `open_beneath`)."""
    if not _parts(relative):
        raise Refused("the workspace root is a directory, not a file")
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK
    fd = open_beneath(relative, flags, create_parents=True)
    try:
        _regular(fd, relative)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def list_files(relative: str) -> list[str]:
    """Workspace-relative names of the files under a workspace folder (links not followed)."""
    try:
        top = open_beneath(relative, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        raise FileNotFoundError(f"no such directory: {relative}") from None
    prefix = "/".join(_parts(relative))
    found = []
    try:
        for folder, _dirs, files, _fd in os.fwalk(".", dir_fd=top):
            for name in files:
                found.append(os.path.normpath(os.path.join(prefix, folder, name)))
    finally:
        os.close(top)
    return sorted(found)
