"""The in-sandbox helper: one long-lived process that runs commands and file operations.

It is not imported by looplab: its source is sent as `python3 -c SOURCE` into the sandbox
(container main process, or the bubblewrap child) and speaks a framed protocol on its
stdin/stdout: each message is a 4-byte big-endian length and a JSON object. Requests carry
an `id` and an `op`; each runs on its own thread, so commands may overlap. Output bytes
travel base64-encoded. On EOF of stdin (the host side went away, even by SIGKILL) it kills
every running command's process group and exits, which stops (and removes) the sandbox.

Stdlib only, no third-party imports: it runs on the sandbox's Python, not looplab's.
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

ROOT = os.path.realpath(os.getcwd())
_out_lock = threading.Lock()
_groups_lock = threading.Lock()
_groups: set[int] = set()


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


class Refused(Exception):
    """A request that names a path outside the workspace."""


def inside(relative: str) -> str:
    """Return the real path of a workspace path, refusing anything that resolves outside."""
    path = os.path.realpath(os.path.join(ROOT, relative))
    if path != ROOT and not path.startswith(ROOT + os.sep):
        raise Refused(f"path {relative!r} resolves outside the workspace (a symlink points out)")
    return path


def run(request: dict[str, object]) -> dict[str, object]:
    """Run one command with its timeout and output cap; return the exec reply."""
    limit = int(str(request["limit"]))
    timeout = float(str(request["timeout"]))
    env = dict(request["env"]) if isinstance(request["env"], dict) else {}
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
    kept = {"out": bytearray(), "err": bytearray()}
    dropped = {"out": 0, "err": 0}
    selector = selectors.DefaultSelector()
    assert proc.stdout is not None
    assert proc.stderr is not None
    selector.register(proc.stdout, selectors.EVENT_READ, "out")
    selector.register(proc.stderr, selectors.EVENT_READ, "err")
    timed_out = False
    deadline = started + timeout
    open_streams = 2
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
    if not timed_out:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    if timed_out:
        _kill_group(proc.pid)
    code = proc.wait()
    _kill_group(proc.pid)  # leftovers of the command's group die with it
    with _groups_lock:
        _groups.discard(proc.pid)
    selector.close()
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
        return {"python": sys.version.split()[0], "root": ROOT, "pid": os.getpid()}
    if op == "exec":
        return run(request)
    if op == "read":
        with open(inside(str(request["path"])), "rb") as handle_:
            return {"data": _b64(handle_.read())}
    if op == "write":
        target = inside(str(request["path"]))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        inside(os.path.relpath(os.path.dirname(target), ROOT))
        with open(target, "wb") as handle_:
            handle_.write(base64.b64decode(str(request["data"])))
        return {}
    if op == "list":
        top = inside(str(request["path"]))
        if not os.path.isdir(top):
            raise FileNotFoundError(f"no such directory: {request['path']}")
        found = []
        for folder, _dirs, files in os.walk(top):
            for name in files:
                found.append(os.path.relpath(os.path.join(folder, name), ROOT))
        return {"files": sorted(found)}
    if op == "untar":
        import io

        with tarfile.open(fileobj=io.BytesIO(base64.b64decode(str(request["data"])))) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(ROOT, filter="data")
            else:
                tar.extractall(ROOT)
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


def main() -> None:
    """Serve requests until stdin closes, then kill what still runs and exit.

    An optional first argument caps the address space of the helper and so of every
    command it starts (the local sandbox's memory limit; Docker uses its cgroup).
    """
    if len(sys.argv) > 1 and int(sys.argv[1]) > 0:
        limit = int(sys.argv[1])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    while True:
        request = receive()
        if request is None:
            break
        threading.Thread(target=serve, args=(request,), daemon=True).start()
    with _groups_lock:
        for pgid in list(_groups):
            _kill_group(pgid)
    os._exit(0)


if __name__ == "__main__":
    main()
