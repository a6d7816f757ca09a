"""Cheap format detection: what a bounded prefix of a file looks like.

`Head` reads at most `HEAD_BYTES` and never parses a whole file, so `looplab import auto`
costs the same on a 1 GB log as on a 1 kB one. Importers' `sniff` methods ask it for JSON
keys (`has_key("trajectory_format")` matches `"trajectory_format":` at any depth; a key
quoted inside a string value is escaped and never matches), for the shape of the start,
or for a zip's member names.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from looplab.traces.importers.source import HEAD_BYTES, read_head

__all__ = ["Head", "peek"]

_RECORD_SEPARATOR = re.compile(r"^===== (record|round) \d+.*=====\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Head:
    """The start of a file, as detection sees it."""

    text: str
    """The first HEAD_BYTES, decoded as UTF-8 (bad bytes replaced)."""
    zip_names: frozenset[str] | None
    """Member names when the file is a zip, else None."""
    first_line: Any
    """The first non-empty line parsed as JSON, None when it is not complete JSON."""
    more_lines: bool
    """True when another non-empty line follows the first."""
    bad_byte: int | None = None
    """Offset of the first byte that is not UTF-8 (None for text, and for zips)."""

    @property
    def start(self) -> str:
        """The first non-blank character ('' for an empty head)."""
        stripped = self.text.lstrip()
        return stripped[:1]

    def has_key(self, *keys: str) -> bool:
        """True when every key appears as `"key":` somewhere in the head."""
        return all(re.search(rf'"{re.escape(k)}"\s*:', self.text) for k in keys)

    def has_value(self, key: str, pattern: str) -> bool:
        """True when `"key": "<pattern>...` appears (a string value starting so)."""
        return re.search(rf'"{re.escape(key)}"\s*:\s*"{pattern}', self.text) is not None

    def has_list(self, key: str) -> bool:
        """True when `"key": [` appears."""
        return re.search(rf'"{re.escape(key)}"\s*:\s*\[', self.text) is not None

    @property
    def separated(self) -> bool:
        """True for TraceLab's readable rendering: `===== record 0001 =====` then JSON."""
        return _RECORD_SEPARATOR.search(self.text) is not None


def peek(path: Path) -> Head:
    """The head of `path` (empty when unreadable; detection then matches nothing)."""
    raw = read_head(path, HEAD_BYTES)
    zip_names: frozenset[str] | None = None
    if raw.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(path) as archive:
                zip_names = frozenset(archive.namelist())
        except (zipfile.BadZipFile, OSError, ValueError):
            zip_names = frozenset()
    text = raw.decode("utf-8", errors="replace")
    bad_byte = None if zip_names is not None else _bad_byte(raw)
    lines = [line for line in text.splitlines() if line.strip()]
    first: Any = None
    if lines and (len(lines) > 1 or len(raw) < HEAD_BYTES):
        try:
            first = json.loads(lines[0])
        except (ValueError, RecursionError):
            first = None
    return Head(
        text=text,
        zip_names=zip_names,
        first_line=first,
        more_lines=len(lines) > 1,
        bad_byte=bad_byte,
    )


def _bad_byte(raw: bytes) -> int | None:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        cut_short = len(raw) == HEAD_BYTES and exc.start >= len(raw) - 3
        return None if cut_short and exc.reason == "unexpected end of data" else exc.start
    return None
