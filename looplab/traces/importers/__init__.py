"""Importers: other harnesses' recorded runs -> looplab traces (see ../README.md).

`IMPORTERS` maps a format name to its `import_<fmt>(path) -> list[ImportedRun]`;
`detect_format(path)` names the format of a file for `looplab import auto`;
`import_runs(fmt, path)` does either.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

from looplab.errors import ConfigError, TraceError
from looplab.traces.importers._common import ImportedRun, ImportReport, read_text
from looplab.traces.importers.inspect import import_inspect, looks_like_inspect
from looplab.traces.importers.mini_swe_agent import (
    import_mini_swe_agent,
    looks_like_mini_swe_agent,
)
from looplab.traces.importers.openhands import import_openhands, looks_like_openhands
from looplab.traces.importers.tracelab import import_tracelab, looks_like_tracelab

__all__ = [
    "FORMATS",
    "IMPORTERS",
    "ImportReport",
    "ImportedRun",
    "detect_format",
    "import_runs",
]

IMPORTERS: dict[str, Callable[[Path], list[ImportedRun]]] = {
    "mini-swe-agent": import_mini_swe_agent,
    "openhands": import_openhands,
    "inspect": import_inspect,
    "tracelab": import_tracelab,
}
"""Format name -> importer."""

FORMATS = ["auto", *IMPORTERS]
"""What `looplab import FORMAT` accepts."""


def detect_format(path: Path) -> str:
    """Name the format of `path` from its content (not its name).

    Args:
        path: a file another harness wrote.

    Returns:
        One of the keys of `IMPORTERS`.

    Raises:
        TraceError: unreadable, or none of the known formats (the message says what the
            file looked like).
    """
    if not path.is_file():
        raise TraceError("no such file", path=str(path))
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
        if names & {"header.json", "_journal/start.json"}:
            return "inspect"
        raise TraceError("a zip, but not an Inspect .eval log (no header.json)", path=str(path))
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if data is not None:
        if looks_like_inspect(data):
            return "inspect"
        if looks_like_openhands(data):
            return "openhands"
        if looks_like_mini_swe_agent(data):
            return "mini-swe-agent"
        if looks_like_tracelab(data):
            return "tracelab"
        if isinstance(data, dict) and data.get("trace_format"):
            raise TraceError(
                f"already a trace ({data['trace_format']}); nothing to import", path=str(path)
            )
        raise TraceError(
            "JSON of no known format (expected an Inspect EvalLog, an OpenHands instance "
            "or event list, or a mini-swe-agent trajectory)",
            path=str(path),
        )
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        record = json.loads(first)
    except json.JSONDecodeError:
        raise TraceError("line 1: neither JSON nor JSON lines", path=str(path)) from None
    if looks_like_tracelab(record):
        return "tracelab"
    if looks_like_openhands(record):
        return "openhands"
    if isinstance(record, dict) and record.get("trace_format"):
        raise TraceError(
            f"already a trace ({record['trace_format']}); nothing to import", path=str(path)
        )
    raise TraceError(
        "line 1: JSON lines of no known format (expected TraceLab rounds or OpenHands instances)",
        path=str(path),
    )


def import_runs(fmt: str, path: Path) -> tuple[str, list[ImportedRun]]:
    """Import every run in `path`.

    Args:
        fmt: `auto` or a key of `IMPORTERS`.
        path: the file.

    Returns:
        The format used and the runs.

    Raises:
        ConfigError: an unknown format (the allowed ones are listed).
        TraceError: unreadable, unknown or corrupt input.
    """
    if fmt not in FORMATS:
        raise ConfigError(f"unknown import format {fmt!r}", field="FORMAT", allowed=FORMATS)
    used = detect_format(path) if fmt == "auto" else fmt
    return used, IMPORTERS[used](path)
