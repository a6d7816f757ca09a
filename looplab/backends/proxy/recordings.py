"""The recording format's one reader and its one writer's lock (`looplab-proxy-1`).

Everything the proxy reads from a recording directory comes through `read_index` and
`read_exchange`, which hold it to the format (store.py's docstring) whatever is on disk:

- **names**: an index entry's `file` is a relative path inside the recording directory;
  an absolute path, a `..` that leaves it, or a symbolic link anywhere on the way is
  refused;
- **kinds**: only regular files with one name are read (a FIFO, a device such as
  /dev/zero, a socket, a hard link, whose other name may be outside the recording, are
  refused from `fstat` after a non-blocking, no-follow open: nothing blocks);
- **sizes**: the index at most `MAX_INDEX_BYTES`, an exchange at most
  `MAX_EXCHANGE_BYTES` (read no further than one byte past the cap);
- **lines**: a torn last index line (a recorder killed mid-write) is skipped with a
  warning; any other line that is not a JSON object of the right types is an error
  naming the file and its line;
- **exchanges**: a JSON object with a known `endpoint`, a final HTTP `status` (200-599),
  a `request` object and `events` (a list of `{"event", "data"}` objects, each event name
  one line) or a `body`.

Every refusal is a `RecordingError` (a `ConfigError`: the CLI prints one line, exit 2)
naming the file, the line or field, and what is allowed.

One writer: `hold_recording` takes an exclusive `flock` on `DIR/.recorder.lock` (pid and start
time written into it); a second recorder on the same directory is refused naming the
holder. The kernel drops the lock when its process dies, however it dies, so a killed
recorder's lock is taken over by the next one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from pathlib import Path
from typing import Any

import structlog

from looplab.clock import utc_now
from looplab.errors import ConfigError

__all__ = [
    "ENDPOINTS",
    "LOCK_NAME",
    "MAX_EXCHANGE_BYTES",
    "MAX_INDEX_BYTES",
    "RecordingError",
    "hold_recording",
    "read_exchange",
    "read_index",
    "release_recording",
]

log = structlog.get_logger(__name__)

MAX_INDEX_BYTES = 64 << 20
"""Largest `index.jsonl` read (64 MiB: ~300,000 exchanges)."""
MAX_EXCHANGE_BYTES = 64 << 20
"""Largest exchange file read (64 MiB; a long streamed reply is a few MB)."""
LOCK_NAME = ".recorder.lock"
"""The recorder's lock file inside a recording directory."""
ENDPOINTS = ("chat", "responses")
_INDEX_TYPES: dict[str, tuple[type, ...]] = {
    "step": (int,),
    "hash": (str,),
    "endpoint": (str,),
    "file": (str,),
}


class RecordingError(ConfigError):
    """A recording that does not hold to the format (the message names file and line)."""

    def __init__(self, message: str, *, field: str = "--replay") -> None:
        super().__init__(message, field=field)


def read_bounded(directory: Path, name: str, limit: int, *, field: str = "--replay") -> bytes:
    """The bytes of the regular file `name` inside `directory` (module docstring rules).

    Raises:
        RecordingError: the name leaves the directory or passes a symbolic link, the file
            is missing, not a regular file, or larger than `limit`.
    """
    path = _inside(directory, name, field)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        why = "a symbolic link" if exc.errno == 40 else exc.strerror  # ELOOP
        raise RecordingError(f"{path}: cannot open ({why})", field=field) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RecordingError(
                f"{path}: not a regular file ({_kind(info.st_mode)}); a recording holds "
                "regular files only",
                field=field,
            )
        if info.st_nlink > 1:  # another name for it may be anywhere on the file system
            raise RecordingError(
                f"{path}: a hard link ({info.st_nlink} names); a recording's files have one "
                "name each (copy a recording with `cp -r`, not `cp -l`)",
                field=field,
            )
        if info.st_size > limit:
            raise RecordingError(f"{path}: {info.st_size} bytes, over the {limit} cap", field=field)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise RecordingError(f"{path}: grew over the {limit} byte cap", field=field)
        return b"".join(chunks)
    except OSError as exc:
        raise RecordingError(f"{path}: cannot read ({exc.strerror})", field=field) from None
    finally:
        os.close(fd)


def _inside(directory: Path, name: str, field: str) -> Path:
    """`directory / name` when `name` is relative, stays inside and passes no link."""
    relative = Path(name)
    if not name or relative.is_absolute() or ".." in relative.parts or "\x00" in name:
        raise RecordingError(
            f"{directory}: file {name!r} is not a relative path inside the recording",
            field=field,
        )
    path = directory
    for part in relative.parts[:-1]:
        path = path / part
        if path.is_symlink() or not path.is_dir():
            raise RecordingError(
                f"{directory}: file {name!r} passes {path}, which is not a directory of the "
                "recording (symbolic links are refused)",
                field=field,
            )
    return path / relative.name


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device")):
        if test(mode):
            return name
    for test, name in ((stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a directory" if stat.S_ISDIR(mode) else "not a regular file"


def read_index(directory: Path, *, field: str = "--replay") -> tuple[list[dict[str, Any]], int]:
    """The index entries of a recording, in step order, and the byte length of its intact
    part (a torn last line is skipped with a warning and not counted).

    Raises:
        RecordingError: no readable index, or a line other than the last that is not an
            entry (module docstring); names the line.
    """
    name = directory / "index.jsonl"
    if not name.exists() and not name.is_symlink():
        raise RecordingError(
            f"{directory} is not a looplab proxy recording (no index.jsonl); record one "
            "with `looplab proxy --record DIR` or `looplab wrap --record DIR`",
            field=field,
        )
    raw = read_bounded(directory, "index.jsonl", MAX_INDEX_BYTES, field=field)
    lines = raw.split(b"\n")
    entries: list[dict[str, Any]] = []
    intact = 0
    for number, line in enumerate(lines, start=1):
        last = number == len(lines)
        if line.strip():
            entry = _entry(line)
            if isinstance(entry, str):
                if last:  # no newline after it: a recorder stopped mid-line
                    log.warning("proxy.recording_torn_line", file=str(name), line=number)
                    break
                raise RecordingError(f"{name} line {number}: {entry}", field=field)
            entries.append(entry)
        intact += len(line) + (0 if last else 1)
    steps = [e["step"] for e in entries]
    if len(set(steps)) != len(steps):
        raise RecordingError(f"{name}: step numbers repeat (two writers?)", field=field)
    entries.sort(key=lambda e: int(e["step"]))
    return entries, intact


def _entry(line: bytes) -> dict[str, Any] | str:
    """One index line as an entry, or why it is not one."""
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return "not a JSON line"
    if not isinstance(entry, dict):
        return "not a JSON object"
    for key, types in _INDEX_TYPES.items():
        value = entry.get(key)
        if not isinstance(value, types) or isinstance(value, bool):
            names = "/".join(t.__name__ for t in types)
            return f"field {key!r} must be {names} (got {type(value).__name__})"
    if entry["endpoint"] not in ENDPOINTS:
        return f"field 'endpoint' must be one of {', '.join(ENDPOINTS)}"
    if not 0 <= entry["step"] < 1 << 53:
        return "field 'step' out of range"
    return entry


def read_exchange(directory: Path, name: str) -> dict[str, Any]:
    """The exchange file `name` (an index entry's `file`), checked (module docstring).

    Raises:
        RecordingError: it cannot be read or does not hold an exchange (names the field).
    """
    raw = read_bounded(directory, name, MAX_EXCHANGE_BYTES)
    where = directory / name
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise RecordingError(f"{where}: not valid JSON ({str(exc)[:120]})") from None
    if not isinstance(data, dict):
        raise RecordingError(f"{where}: not a JSON object")
    problem = _exchange_problem(data)
    if problem:
        raise RecordingError(f"{where}: {problem}")
    return data


def _exchange_problem(data: dict[str, Any]) -> str | None:
    """Why `data` is not an exchange (None: it is)."""
    if data.get("endpoint") not in ENDPOINTS:
        return f"field 'endpoint' must be one of {', '.join(ENDPOINTS)}"
    status = data.get("status", 200)
    if not isinstance(status, int) or isinstance(status, bool) or not 200 <= status <= 599:
        return "field 'status' must be a final HTTP status (200-599)"
    if not isinstance(data.get("request"), dict):
        return "field 'request' must be an object"
    events = data.get("events")
    if events is None:
        if not isinstance(data.get("body"), dict | None):
            return "field 'body' must be an object"
        return None
    if not isinstance(events, list):
        return "field 'events' must be a list"
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            return f"events[{index}] must be an object"
        if not isinstance(event.get("data", ""), str):
            return f"events[{index}].data must be a string"
        name = event.get("event")
        if not isinstance(name, str | None):
            return f"events[{index}].event must be a string or null"
        if name is not None and ("\n" in name or "\r" in name):
            return f"events[{index}].event must be one line (no CR or LF)"
    return None


def hold_recording(directory: Path) -> int:
    """Lock `directory` for this process's recorder (made first); the lock's descriptor.

    Raises:
        RecordingError: another live process records into it (named), or the directory
            cannot be made or locked (field `--record`).
    """
    path = directory / LOCK_NAME
    try:
        (directory / "exchanges").mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise RecordingError(
            f"{directory}: cannot record here ({exc.strerror})", field="--record"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        owner = _owner(path)
        os.close(fd)
        if isinstance(exc, BlockingIOError):
            raise RecordingError(
                f"{directory} is being recorded into by another process ({owner}); stop it "
                "or record into another directory",
                field="--record",
            ) from None
        raise RecordingError(f"{path}: cannot lock ({exc.strerror})", field="--record") from None
    owner_record = {"pid": os.getpid(), "since": utc_now().isoformat()}
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps(owner_record).encode())
    return fd


def release_recording(fd: int) -> None:
    """Give up a lock taken by `hold_recording` (idempotent on a closed descriptor)."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
    with contextlib.suppress(OSError):
        os.close(fd)


def _owner(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return f"pid {int(data['pid'])}, since {data['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "an unknown process"
