"""Reading other harnesses' files: text, JSON, bounded prefixes, times and typed values.

Every importer reads its source through these helpers, so that every way a file can be
wrong (missing, not UTF-8, not JSON, a value of the wrong type, NaN, a number too big to be
a count or a time) ends in a `TraceError` naming the file, or in `BadValue` (which the
registry turns into one), never in a stray exception.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.assembly.axis import BadValue
from looplab.traces.assembly.builder import OUTPUT_LIMIT

__all__ = [
    "HEAD_BYTES",
    "OUTPUT_LIMIT",
    "BadValue",
    "as_float",
    "as_int",
    "as_str",
    "cut",
    "dig",
    "is_naive_iso",
    "json_records",
    "load_json",
    "loads",
    "obj",
    "parse_json",
    "parse_time",
    "read_head",
    "read_text",
    "safe_run_id",
    "source_digest",
]

HEAD_BYTES = 64 * 1024
"""How much of a file `sniff` may read: detection never parses a whole file."""

_SEPARATOR = re.compile(r"^===== (record|round) (\d+)\b[^\n]*=====[ \t]*$", re.MULTILINE)
"""TraceLab's readable rendering puts one of these before each record."""
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_COUNT = 10**15
"""Token counts and exit codes above this are not counts but damage."""
_MIN_EPOCH, _MAX_EPOCH = 0.0, 253_402_300_799.0
"""1970-01-01 .. 9999-12-31: what a datetime can hold."""


def read_text(path: Path) -> str:
    """The file's text.

    Raises:
        TraceError: missing, unreadable or not UTF-8 (with the byte offset).
    """
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise TraceError(f"cannot read: {exc.strerror}", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise TraceError(
            f"not a UTF-8 text file (invalid byte at offset {exc.start})", path=str(path)
        ) from None


def source_digest(path: Path) -> str:
    """SHA-256 (hex) of the file's bytes: the identity of an imported source.

    Raises:
        TraceError: unreadable.
    """
    try:
        stat = path.stat()
    except OSError as exc:
        raise TraceError(f"cannot read: {exc.strerror}", path=str(path)) from None
    return _digest(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=64)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    """Cached by path, size and modification time: a file with several runs is hashed once."""
    sha = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                sha.update(block)
    except OSError as exc:
        raise TraceError(f"cannot read: {exc.strerror}", path=path) from None
    return sha.hexdigest()


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """At most `size` bytes from the start of the file (b"" when unreadable)."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def parse_json(text: str, path: Path, *, line: int | None = None) -> Any:
    """Parse JSON text: a whole file, or line `line` of a JSON-lines file.

    Raises:
        TraceError: invalid JSON (with line and column), nested too deep, or an integer
            literal beyond Python's digit limit.
    """
    where = "" if line is None else f"line {line}: "
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        at = f"line {exc.lineno} column {exc.colno}: " if line is None else where
        column = "" if line is None else f" at column {exc.colno}"
        raise TraceError(f"{at}not valid JSON ({exc.msg}{column})", path=str(path)) from None
    except RecursionError:
        raise TraceError(f"{where}JSON nested too deeply", path=str(path)) from None
    except ValueError as exc:
        raise TraceError(f"{where}not usable JSON ({exc})", path=str(path)) from None


def loads(text: str | bytes) -> Any:
    """`json.loads`, with lone surrogates (`"\\ud800"`, legal JSON, not encodable as
    UTF-8) replaced by U+FFFD so that every string can be written to a trace.

    Raises:
        ValueError, RecursionError: as `json.loads`.
    """
    value = json.loads(text)
    if _SURROGATE_ESCAPE.search(text if isinstance(text, str) else text.decode("latin-1")):
        return _without_surrogates(value)
    return value


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


def json_records(path: Path) -> list[tuple[str, Any]]:
    """The JSON values in a file, each with where it was (for error messages).

    The whole file when it is one JSON value (`""`); else one per non-empty line (JSON
    lines, `"line N: "`); else, for TraceLab's readable rendering (`# ...` comment lines,
    then `===== record 0001 =====` / `===== round 0001 | ... =====` before each pretty-
    printed value), one per block (`"record N: "`).

    Raises:
        TraceError: unreadable, or a line / block that is not JSON (named).
    """
    text = read_text(path)
    try:
        return [("", loads(text))]
    except (ValueError, RecursionError):
        pass
    if _SEPARATOR.search(text):
        return _separated_records(text, path)
    return [
        (f"line {number}: ", parse_json(line, path, line=number))
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]


def _separated_records(text: str, path: Path) -> list[tuple[str, Any]]:
    records: list[tuple[str, Any]] = []
    blocks = _SEPARATOR.split(text)
    # split() yields: preamble, then (kind, number, body) per separator
    for kind, number, body in zip(blocks[1::3], blocks[2::3], blocks[3::3], strict=True):
        where = f"{kind} {int(number)}: "
        try:
            records.append((where, loads(body)))
        except json.JSONDecodeError as exc:
            raise TraceError(
                f"{where}not valid JSON ({exc.msg} at line {exc.lineno} of the block)",
                path=str(path),
            ) from None
        except (ValueError, RecursionError):
            raise TraceError(f"{where}not usable JSON", path=str(path)) from None
    return records


def load_json(path: Path) -> Any:
    """Parse a whole JSON file (see `read_text` and `parse_json` for the errors)."""
    return parse_json(read_text(path), path)


def parse_time(value: Any, where: str, path: Path, *, naive_offset_s: float = 0.0) -> float:
    """Epoch seconds from an ISO 8601 string or an epoch number.

    Args:
        value: `2025-04-30T16:32:54.707474`, `...Z`, `...-04:00`, or seconds since the epoch.
        where: the record, for the error message (`history[3].timestamp`).
        path: the file, for the error message.
        naive_offset_s: seconds to subtract from a time without a zone (read as UTC).

    Raises:
        TraceError: not a time, or outside the years 1970..9999.
    """
    seconds: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            seconds = as_float(value)
        except BadValue:
            seconds = None
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if parsed.tzinfo is None:
                seconds = parsed.replace(tzinfo=UTC).timestamp() - naive_offset_s
            else:
                seconds = parsed.timestamp()
    if seconds is None or not _MIN_EPOCH <= seconds <= _MAX_EPOCH:
        raise TraceError(f"{where}: {_show(value)} is not a timestamp", path=str(path))
    return seconds


def is_naive_iso(value: Any) -> bool:
    """True for an ISO time string without a zone."""
    if not isinstance(value, str):
        return False
    try:
        return datetime.fromisoformat(value).tzinfo is None
    except ValueError:
        return False


def cut(text: str | None) -> str | None:
    """`text` cut to OUTPUT_LIMIT characters."""
    return None if text is None else text[:OUTPUT_LIMIT]


def safe_run_id(*parts: object) -> str:
    """A file-name-safe run id from the given parts (at most 120 characters)."""
    text = "-".join(str(p) for p in parts if p not in (None, ""))
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._")[:120] or "run"


def obj(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def dig(data: Any, *keys: str) -> Any:
    """`data[k1][k2]...`, None where a level is missing or not an object."""
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def as_str(value: Any) -> str | None:
    """`value` if it is a string, a number's text, else None (objects are not names)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def as_int(value: Any) -> int | None:
    """`value` as an int, None when it is not a number.

    Raises:
        BadValue: NaN, infinite, or beyond any plausible count.
    """
    number = as_float(value)
    if number is None:
        return None
    if abs(number) > _MAX_COUNT:
        raise BadValue(f"{_show(value)} is not a plausible count")
    return int(value) if isinstance(value, int) else int(number)


def as_float(value: Any) -> float | None:
    """`value` as a float, None when it is not a number.

    Raises:
        BadValue: NaN or infinite (JSON's `NaN`, `Infinity`, or an overflowing literal).
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        raise BadValue(f"{_show(value)} is too large a number") from None
    if not math.isfinite(number):
        raise BadValue(f"{_show(value)} is not a finite number")
    return number


def _show(value: Any) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int beyond Python's digit limit
        return "a number with thousands of digits"
    return text if len(text) <= 60 else text[:57] + "..."
