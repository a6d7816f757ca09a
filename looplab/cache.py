"""The user's looplab cache folder, and values derived from the installed package alone.

`cache_dir()` is where looplab keeps what it can always make again: downloaded Debian
packages for the image build (`debs/`) and `derived` values (`derived/`). It is
`$LOOPLAB_CACHE_DIR` if set, else `$XDG_CACHE_HOME/looplab`, else `~/.cache/looplab`.

`derived(name, compute)` keeps a JSON value that depends on nothing but looplab's own files
(its code and shipped data), e.g. the published claims re-timed on the shipped workloads
that every report draws (`looplab.claims.panel.waterfall`: about a second of CPU per report
written). The file's name carries `package_digest()`, a SHA-256 of every file of the
installed package, so any change to the code or data computes it afresh; old files are
left for the user to clear. A cache that cannot be read (missing, damaged, another shape)
or written (read-only home) is computed again: never an error, never a different answer.
Writes are atomic (a temporary file renamed), so processes racing to fill it are safe.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import structlog

__all__ = ["cache_dir", "derived", "package_digest", "tree_digest"]

log = structlog.get_logger(__name__)

T = TypeVar("T")


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
    in path order (compiled bytecode, `__pycache__/`, left out)."""
    digest = hashlib.sha256()
    files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def derived(name: str, compute: Callable[[], Any], load: Callable[[Any], T]) -> T:
    """`load(compute())`, with `compute()` (a JSON value derived from the package alone)
    kept in the cache folder under `name` and the package digest, and read from there
    when present.

    Args:
        name: a file-name-safe label of the value (e.g. "claim-decompositions").
        compute: makes the value; its result must survive `json.dumps`/`json.loads`
            unchanged (plain dicts, lists, strings, numbers).
        load: turns the JSON value into what the caller uses; a stored value it refuses
            (KeyError, TypeError, ValueError: another shape) is computed again.
    """
    path = cache_dir() / "derived" / f"{name}-{package_digest()}.json"
    try:
        return load(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, KeyError, TypeError, ValueError):
        pass  # not there yet, unreadable or of another shape: compute it
    value = compute()
    try:
        _write(path, value)
    except OSError as exc:  # a read-only or full home: the value is still right
        log.debug("cache_not_written", path=str(path), error=str(exc))
    return load(value)


def _write(path: Path, value: Any) -> None:
    """`value` as JSON at `path`, all or nothing (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
