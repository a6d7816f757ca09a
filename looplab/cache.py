"""The user's looplab cache folder, and values derived from the package and named inputs.

`cache_dir()` is where looplab keeps what it can always make again: downloaded Debian
packages for the image build (`debs/`) and `derived` values (`derived/`). It is
`$LOOPLAB_CACHE_DIR` if set, else `$XDG_CACHE_HOME/looplab`, else `~/.cache/looplab`.

`derived(name, compute, load, inputs)` keeps a JSON value that depends on nothing but
looplab's own files and the `inputs` folders (e.g. the published claims re-timed on the
workloads of `tasks/` or `LOOPLAB_TASKS_DIR`, which every report draws:
`looplab.report.claims.waterfall`, about a second of CPU per report written). Its key is the
name, `package_digest()` (a SHA-256 of every file of the installed package) and the digest of
every input folder, so a change to the code, the data or a re-calibrated workload computes
it afresh; old files are left for the user to clear.

A stored value is believed only when everything holds (else it is computed again, never an
error, never a different answer; issue 47, finding 5):

- read bounded: a regular file (a FIFO or a device is never read), opened without following
  a symlink, at most `MAX_ENTRY_BYTES`; and `derived/` itself is never a symlink;
- its HMAC-SHA256 over the key and the value checks with the user's own secret
  (`derived/.key`, 32 random bytes, mode 0600, owned by the user; one of another owner or
  mode is replaced). A shared, writable `LOOPLAB_CACHE_DIR` can therefore only cost a
  recomputation: a value another user wrote, or one moved under another key, is refused;
- JSON with only finite numbers, and the caller's `load` accepts it (it checks the types).

Writes are atomic (a temporary file made with `O_EXCL | O_NOFOLLOW` inside `derived/`,
renamed over the entry), so processes racing to fill it are safe, and a value with a
non-finite number is returned but not stored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import hmac
import json
import math
import os
import secrets
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import structlog

__all__ = [
    "MAX_ENTRY_BYTES",
    "cache_dir",
    "derived",
    "package_digest",
    "stored_fields",
    "stored_number",
    "tree_digest",
]

log = structlog.get_logger(__name__)

T = TypeVar("T")

MAX_ENTRY_BYTES = 4 * 1024 * 1024
"""Largest derived entry read (the claims' decompositions are about 5 KB)."""
_KEY_FILE = ".key"
_KEY_BYTES = 32
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def cache_dir() -> Path:
    """The looplab cache folder (module docstring); not created here."""
    explicit = os.environ.get("LOOPLAB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "looplab"


@functools.cache
def package_digest() -> str:
    """`tree_digest` of the installed looplab package (once per process)."""
    return tree_digest(Path(__file__).resolve().parent)


def tree_digest(root: Path) -> str:
    """SHA-256 (hex, first 16 digits) of every file under `root`: relative paths and bytes,
    in path order (compiled bytecode, `__pycache__/`, left out; a missing root digests as
    empty)."""
    digest = hashlib.sha256()
    files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def derived(
    name: str,
    compute: Callable[[], Any],
    load: Callable[[Any], T],
    inputs: Sequence[Path] = (),
) -> T:
    """`load(compute())`, with `compute()` kept in the cache folder under `name`, the
    package digest and the inputs' digests, and read from there when it checks out (see the
    module docstring).

    Args:
        name: a file-name-safe label of the value (e.g. "claim-decompositions").
        compute: makes the value; its result must survive `json.dumps`/`json.loads`
            unchanged (plain dicts, lists, strings, finite numbers).
        load: turns the JSON value into what the caller uses, checking its types; a
            stored value it refuses (KeyError, TypeError, ValueError) is computed again.
        inputs: folders the value is derived from besides the package (their every file
            is in the key).
    """
    key = "-".join([name, package_digest(), *(tree_digest(p) for p in inputs)])
    stored = _read(key)
    if stored is not None:
        try:
            return load(stored)
        except (KeyError, TypeError, ValueError) as exc:
            log.debug("cache_refused", key=key, error=str(exc))
    value = compute()
    try:
        _write(key, value)
    except (OSError, ValueError) as exc:  # read-only home, a symlink, a non-finite number
        log.debug("cache_not_written", key=key, error=str(exc))
    return load(value)


def stored_fields(raw: Any, kind: type, what: str | None = None) -> dict[str, Any]:
    """For a `derived` value's `load`: `raw` as a dict holding exactly the fields of the
    dataclass `kind` (a stored value is checked like outside input).

    Raises:
        TypeError: not a dict, or a field missing or extra (named `what`, else `kind`'s name).
    """
    names = {f.name for f in dataclasses.fields(kind)}
    if not isinstance(raw, dict) or set(raw) != names:
        raise TypeError(f"{what or kind.__name__}: expected exactly the fields {sorted(names)}")
    return raw


def stored_number(value: Any, what: str = "value") -> float:
    """For a `derived` value's `load`: `value` as a float when it is a finite number (not a
    bool).

    Raises:
        TypeError: anything else, named `what`.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"{what}: expected a finite number, got {value!r}")
    return float(value)


def _read(key: str) -> Any:
    """The value stored under `key` when its file is sound and its HMAC checks; else None."""
    try:
        folder = os.open(cache_dir() / "derived", _DIR_FLAGS)
    except OSError:
        return None
    try:
        secret = _secret(folder, create=False)
        raw = _bounded_read(f"{key}.json", folder, MAX_ENTRY_BYTES)
        if secret is None or raw is None:
            return None
        mac, _, payload = raw.partition(b"\n")
        if not hmac.compare_digest(mac, _mac(secret, key, payload)):
            log.debug("cache_forged", key=key)
            return None
        return json.loads(payload, parse_constant=_refuse_constant)
    except (OSError, ValueError):
        return None
    finally:
        os.close(folder)


def _write(key: str, value: Any) -> None:
    """`value` under `key`, with its HMAC, all or nothing (a temporary file renamed over it).

    Raises:
        OSError: `derived/` cannot be made or is a symlink, or the disk refuses.
        ValueError: the value holds a non-finite number (or is not JSON).
    """
    payload = json.dumps(value, allow_nan=False).encode()
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(root / "derived", 0o700)
    folder = os.open(root / "derived", _DIR_FLAGS)
    try:
        secret = _secret(folder, create=True)
        assert secret is not None  # create=True makes one or raises
        _place(folder, f"{key}.json", _mac(secret, key, payload) + b"\n" + payload, 0o644)
    finally:
        os.close(folder)


def _mac(secret: bytes, key: str, payload: bytes) -> bytes:
    """Hex HMAC-SHA256 binding `payload` to `key`."""
    return hmac.new(secret, key.encode() + b"\0" + payload, hashlib.sha256).hexdigest().encode()


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a finite number")


def _secret(folder: int, create: bool) -> bytes | None:
    """The user's HMAC secret in `derived/.key`: only a regular file of `_KEY_BYTES` owned by
    this user and closed to others; `create`: make one (replacing an untrusted one)."""
    try:
        fd = os.open(_KEY_FILE, _READ_FLAGS, dir_fd=folder)
    except FileNotFoundError:
        fd = -1
    if fd >= 0:
        try:
            info = os.fstat(fd)
            trusted = (
                stat.S_ISREG(info.st_mode)
                and info.st_uid == os.getuid()
                and not info.st_mode & 0o077
                and info.st_size == _KEY_BYTES
            )
            if trusted:
                return os.read(fd, _KEY_BYTES + 1)
        finally:
            os.close(fd)
    if not create:
        return None
    _place(folder, _KEY_FILE, secrets.token_bytes(_KEY_BYTES), 0o600)
    return _secret(folder, create=False)


def _bounded_read(name: str, folder: int, limit: int) -> bytes | None:
    """The bytes of `name` in `folder` when it is a regular file (not a symlink) of at most
    `limit` bytes; None otherwise."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            log.debug("cache_not_a_file", name=name, mode=oct(info.st_mode), size=info.st_size)
            return None
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                return None
        return b"".join(chunks)
    finally:
        os.close(fd)


def _place(folder: int, name: str, data: bytes, mode: int) -> None:
    """`data` as `name` in `folder`: a new temporary file (never through a symlink) renamed
    over it."""
    temporary = f".{name}-{secrets.token_hex(8)}.tmp"
    fd = os.open(temporary, _NEW_FLAGS, mode, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=folder)
        raise
