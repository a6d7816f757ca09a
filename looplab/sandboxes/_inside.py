"""The in-sandbox helper: one long-lived process that runs commands and file operations.

Its source is sent as `python3 -c SOURCE serve CONFIG` into the sandbox (container main
process, or the bubblewrap child) and speaks a framed protocol on its stdin/stdout: each
message is a 4-byte big-endian length and a JSON object. Requests carry an `id` and an
`op`; each runs on its own thread, so commands may overlap. Output bytes travel
base64-encoded. On EOF of stdin (the host side went away, even by SIGKILL) it kills every
process it started, detached ones included, and exits, which stops the sandbox.

Every command's environment carries three markers: `LOOPLAB_SANDBOX` (this sandbox),
`LOOPLAB_EXEC` (this command) and `LOOPLAB_OWNER` (the host process that owns the sandbox).
A command that runs past its timeout is killed with its whole tree: its process group, its
descendants and every process carrying its `LOOPLAB_EXEC`, so children that called `setsid`
die too; so is one whose exec is cancelled (`exec` with `cancel: ID`). A command that exits
normally takes its process group with it; detached (`setsid`) children survive it (that is
how a task's services keep running) and die when the sandbox closes, or by `stop-groups`
(`python3 -c SOURCE stop-groups GRACE PIDFILE...`: TERM, then KILL after GRACE seconds,
verified gone, JSON on stdout).

Stdlib only, no third-party imports: it runs on the sandbox's Python, not looplab's. Its
source is three files joined (`_channel.helper_source`): `_inside_procs.py` (the process
functions, which the host side imports too: one home for the process-tree logic),
`_inside_files.py` (workspace file operations) and this one; importing any of them has no
side effects.
"""

import base64
import contextlib
import json
import os
import resource
import selectors
import signal
import struct
import subprocess
import sys
import tarfile
import threading
import time

from looplab.sandboxes._inside_files import Refused, list_files, read_file, set_root, write_file
from looplab.sandboxes._inside_procs import (
    EXEC_ENV,
    OWNER_ENV,
    SANDBOX_ENV,
    kill_until_gone,
    marked,
    stop_group,
    tree_of,
)

_settings: dict[str, object] = {"root": "", "marker": "", "owner": ""}
_out_lock = threading.Lock()
_groups_lock = threading.Lock()
_groups: set[int] = set()
_running: dict[object, tuple[int, str]] = {}  # exec request id -> (pid, exec id)
_exec_ids = iter(range(1, 1 << 62))


# -- protocol ------------------------------------------------------------------------------


def send(message: dict[str, object]) -> None:
    """Write one framed JSON message to stdout."""
    body = json.dumps(message).encode()
    with _out_lock:
        sys.stdout.buffer.write(struct.pack(">I", len(body)) + body)
        sys.stdout.buffer.flush()


def receive() -> dict[str, object] | None:
    """Read one framed JSON message from stdin; None at EOF."""
    head = sys.stdin.buffer.read(4)
    if len(head) < 4:
        return None
    (size,) = struct.unpack(">I", head)
    body = sys.stdin.buffer.read(size)
    if len(body) < size:
        return None
    result: dict[str, object] = json.loads(body)
    return result


def inside(relative: str) -> str:
    """Return the real path of a workspace path, refusing anything that resolves outside.

    Only for a command's working directory (the command runs inside the sandbox, so a
    link swapped after this check gains it nothing); file operations use `open_beneath`.
    """
    root = str(_settings["root"])
    path = os.path.realpath(os.path.join(root, relative))
    if path != root and not path.startswith(root + os.sep):
        raise Refused(f"path {relative!r} resolves outside the workspace (a symlink points out)")
    return path


def run(request: dict[str, object]) -> dict[str, object]:
    """Run one command with its timeout and output cap; return the exec reply."""
    if "cancel" in request:  # kill the tree of exec request ID (the host cancelled it)
        found = _running.get(request["cancel"])  # one dict read: atomic
        if found is not None:
            kill_until_gone(lambda: tree_of(found[0], marker=(EXEC_ENV, found[1])))
        return {"cancelled": found is not None}
    limit = int(str(request["limit"]))
    timeout = float(str(request["timeout"]))
    env = dict(request["env"]) if isinstance(request["env"], dict) else {}
    exec_id = f"{_settings['marker']}.{next(_exec_ids)}"
    env.update({SANDBOX_ENV: _settings["marker"], EXEC_ENV: exec_id, OWNER_ENV: _settings["owner"]})
    cwd = inside(str(request.get("cwd") or "."))
    argv = request["argv"]
    assert isinstance(argv, list)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            [str(part) for part in argv],
            cwd=cwd,
            env={str(k): str(v) for k, v in env.items()},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return {"code": 127, "out": "", "err": _b64(f"{exc}\n".encode()), "timed_out": False}
    with _groups_lock:
        _groups.add(proc.pid)
        _running[request.get("id")] = (proc.pid, exec_id)
    assert proc.stdout is not None
    assert proc.stderr is not None
    kept, dropped, timed_out = _collect(proc, started + timeout, limit)
    if timed_out:
        kill_until_gone(lambda: tree_of(proc.pid, marker=(EXEC_ENV, exec_id)))
    code = proc.wait()
    _kill_group(proc.pid)  # leftovers of the command's group die with it
    with _groups_lock:
        _groups.discard(proc.pid)
        _running.pop(request.get("id"), None)
    proc.stdout.close()
    proc.stderr.close()
    return {
        "code": 128 - code if code < 0 else code,
        "out": _b64(bytes(kept["out"])),
        "err": _b64(bytes(kept["err"])),
        "dropped_out": dropped["out"],
        "dropped_err": dropped["err"],
        "timed_out": timed_out,
    }


def _collect(
    proc: "subprocess.Popen[bytes]", deadline: float, limit: int
) -> tuple[dict[str, bytearray], dict[str, int], bool]:
    """Read both streams up to `limit` bytes each until they close or `deadline` passes."""
    kept = {"out": bytearray(), "err": bytearray()}
    dropped = {"out": 0, "err": 0}
    selector = selectors.DefaultSelector()
    assert proc.stdout is not None
    assert proc.stderr is not None
    selector.register(proc.stdout, selectors.EVENT_READ, "out")
    selector.register(proc.stderr, selectors.EVENT_READ, "err")
    open_streams = 2
    timed_out = False
    while open_streams:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        for key, _ in selector.select(min(remaining, 1.0)):
            chunk = os.read(key.fd, 65536)
            name = str(key.data)
            if not chunk:
                selector.unregister(key.fileobj)
                open_streams -= 1
                continue
            room = limit - len(kept[name])
            if room > 0:
                kept[name] += chunk[:room]
            dropped[name] += max(0, len(chunk) - max(room, 0))
    selector.close()
    if not timed_out:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    return kept, dropped, timed_out


def _kill_group(pgid: int) -> None:
    """SIGKILL a process group, ignoring one that is already gone."""
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)


def _b64(data: bytes) -> str:
    """Base64 text of bytes."""
    return base64.b64encode(data).decode()


def handle(request: dict[str, object]) -> dict[str, object]:
    """Dispatch one request to its operation and return its reply (without the id)."""
    op = request.get("op")
    if op == "ping":
        return {"python": sys.version.split()[0], "root": _settings["root"], "pid": os.getpid()}
    if op == "exec":
        return run(request)
    if op == "read":
        return {"data": _b64(read_file(str(request["path"])))}
    if op == "write":
        write_file(str(request["path"]), base64.b64decode(str(request["data"])))
        return {}
    if op == "list":
        return {"files": list_files(str(request["path"]))}
    if op == "untar":
        import io

        with tarfile.open(fileobj=io.BytesIO(base64.b64decode(str(request["data"])))) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(str(_settings["root"]), filter="data")
            else:
                tar.extractall(str(_settings["root"]))
        return {}
    raise ValueError(f"unknown op {op!r}")


def serve(request: dict[str, object]) -> None:
    """Answer one request on this thread, turning failures into error replies."""
    try:
        reply = handle(request)
    except Refused as exc:
        reply = {"error": "refused", "message": str(exc)}
    except FileNotFoundError as exc:
        reply = {"error": "not_found", "message": str(exc)}
    except Exception as exc:  # every failure must reach the host as a reply
        reply = {"error": "failed", "message": f"{type(exc).__name__}: {exc}"}
    reply["id"] = request.get("id")
    send(reply)


def confine(config: dict[str, object]) -> None:
    """Apply the sandbox's limits to this process (and so to everything it starts).

    `seccomp` (base64 BPF programs by `uname -m`): loaded last (`load_seccomp`), on the
    Docker helper. `memory`: address-space cap per process (RLIMIT_AS); `nproc`: processes
    of this uid (RLIMIT_NPROC; per user namespace on Linux >= 5.14); `user` (`uid:gid`): drop from
    root to that user, with no-new-privileges and an empty capability bounding set, so
    setuid programs and file capabilities cannot climb back.
    """
    memory = int(str(config.get("memory") or 0))
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    user = config.get("user")
    if user:
        import ctypes

        uid, _, gid = str(user).partition(":")
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        for cap in range(64):  # PR_CAPBSET_DROP: an empty bounding set; EINVAL past the last
            libc.prctl(24, cap, 0, 0, 0)
        os.setgroups([])
        os.setgid(int(gid or uid))
        os.setuid(int(uid))
    nproc = int(str(config.get("nproc") or 0))
    if nproc > 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    programs = config.get("seccomp")
    if isinstance(programs, dict) and os.uname().machine in programs:
        load_seccomp(base64.b64decode(str(programs[os.uname().machine])))


def load_seccomp(program: bytes) -> None:
    """Load a seccomp BPF program on this process (inherited by everything it starts);
    stacked on any filter already there (Docker's profile), so it can only refuse more.
    An image whose Python has no ctypes keeps Docker's profile alone."""
    try:
        import ctypes
    except ImportError:
        return

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    code = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS, which a filter needs
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, MODE_FILTER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def main() -> None:
    """Serve requests until stdin closes, then kill what still runs and exit.

    `serve CONFIG` (JSON: `marker`, `owner`, and the limits of `confine`) runs the helper;
    `stop-groups GRACE PIDFILE...` stops the process groups named in pid files.
    """
    mode = sys.argv[1] if len(sys.argv) > 1 else "serve"
    if mode == "stop-groups":
        grace = float(sys.argv[2])
        results = []
        for pidfile in sys.argv[3:]:
            with contextlib.suppress(OSError, ValueError), open(pidfile) as handle_:
                results.append(stop_group(int(handle_.read().strip()), grace))
        print(json.dumps(results))
        return
    config = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    _settings.update(
        root=os.path.realpath(os.getcwd()),
        marker=str(config.get("marker") or f"pid{os.getpid()}"),
        owner=str(config.get("owner") or ""),
    )
    confine(config)
    set_root(os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
    while True:
        request = receive()
        if request is None:
            break
        try:
            threading.Thread(target=serve, args=(request,), daemon=True).start()
        except RuntimeError as exc:  # no thread left under the pids limit (a fork bomb)
            send(
                {
                    "id": request.get("id"),
                    "error": "failed",
                    "message": f"{exc}: the sandbox "
                    "is at its process limit (pids); the command was not started",
                }
            )
    with _groups_lock:
        for pgid in list(_groups):
            _kill_group(pgid)
    me = os.getpid()
    kill_until_gone(lambda: marked(SANDBOX_ENV, str(_settings["marker"]), exclude=me))
    os._exit(0)


if __name__ == "__main__":
    main()
