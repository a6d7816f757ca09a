"""The importer registry: format name -> `Importer`, detection, and the one entry point.

A format joins by one line in `REGISTRY` (its module defines a small class with `name`,
`expects`, `sniff` and `load`). `looplab import FORMAT` looks the name up; `import auto`
asks each importer's `sniff` in registry order (more specific shapes first) and loads with
the first that recognises the file. Whatever goes wrong inside an importer ends as a
`TraceError` naming the file and what the format expects, never as a traceback.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Protocol

from looplab.errors import ConfigError, TraceError
from looplab.traces.importers.agentlab import AgentLabImporter
from looplab.traces.importers.atif import AtifImporter
from looplab.traces.importers.browser_use import BrowserUseImporter
from looplab.traces.importers.claude_code import ClaudeCodeImporter
from looplab.traces.importers.cline import ClineImporter
from looplab.traces.importers.codex import CodexImporter
from looplab.traces.importers.gemini_cli_json import GeminiCliJsonImporter
from looplab.traces.importers.harbor import HarborImporter
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.inspect import InspectImporter
from looplab.traces.importers.mini_swe_agent import MiniSweAgentImporter
from looplab.traces.importers.open_operator_evals import OpenOperatorEvalsImporter
from looplab.traces.importers.openhands import OpenHandsImporter
from looplab.traces.importers.osworld import OsworldImporter
from looplab.traces.importers.sniff import Head, peek
from looplab.traces.importers.source import BadValue
from looplab.traces.importers.swe_agent import SweAgentImporter
from looplab.traces.importers.tracelab import TraceLabImporter

__all__ = [
    "FORMATS",
    "REGISTRY",
    "Importer",
    "describe_formats",
    "detect_format",
    "get_importer",
    "import_runs",
]


class Importer(Protocol):
    """One harness's file format."""

    name: str
    """The FORMAT name of `looplab import FORMAT`."""
    expects: str
    """What a file of this format looks like, for error messages and --help."""

    def sniff(self, path: Path) -> bool:
        """True when the file looks like this format (reads at most a bounded prefix)."""
        ...

    def load(self, path: Path) -> list[ImportedRun]:
        """Every run in the file.

        Raises:
            TraceError: the file is not this format, or a record is malformed (named).
            BadValue: a value that cannot be what its field claims.
        """
        ...


def _registry(*importers: Importer) -> dict[str, Importer]:
    return {importer.name: importer for importer in importers}


REGISTRY: dict[str, Importer] = _registry(
    HarborImporter(),
    AtifImporter(),
    InspectImporter(),
    MiniSweAgentImporter(),
    SweAgentImporter(),
    OpenHandsImporter(),
    TraceLabImporter(),
    ClaudeCodeImporter(),
    CodexImporter(),
    OpenOperatorEvalsImporter(),
    BrowserUseImporter(),
    AgentLabImporter(),
    OsworldImporter(),
    ClineImporter(),
    GeminiCliJsonImporter(),
)
"""Format name -> importer, in detection order."""

FORMATS = ["auto", *sorted(REGISTRY)]
"""What `looplab import FORMAT` accepts."""

_DATA_ERRORS = (
    BadValue,
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    IndexError,
    RecursionError,
    OverflowError,
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
)
"""What malformed data can raise inside an importer; each becomes a TraceError."""


def describe_formats() -> str:
    """One `  name: what it expects` line per registered format."""
    return "".join(f"\n  {name}: {imp.expects}" for name, imp in REGISTRY.items())


def get_importer(fmt: str) -> Importer:
    """The importer registered as `fmt`.

    Raises:
        ConfigError: an unknown name (the message lists every format and what it expects).
    """
    importer = REGISTRY.get(fmt)
    if importer is None:
        raise ConfigError(
            f"unknown import format {fmt!r}; the formats are:{describe_formats()}\n",
            field="FORMAT",
            allowed=FORMATS,
        )
    return importer


def detect_format(path: Path) -> str:
    """Name the format of `path` from its content (not its name), reading only its start.

    Raises:
        TraceError: missing, not a regular file, already a looplab trace, or of no
            registered format (the message says what it looked like and lists them).
    """
    _check_file(path)
    for name, importer in REGISTRY.items():
        if importer.sniff(path):
            return name
    head = peek(path)
    record = head.first_line
    if isinstance(record, dict) and record.get("trace_format"):
        raise TraceError(
            f"already a trace ({record['trace_format']!s:.40}); nothing to import", path=str(path)
        )
    raise TraceError(
        f"{_looks_like(head)}; expected one of:{describe_formats()}",
        path=str(path),
    )


def import_runs(fmt: str, path: Path) -> tuple[str, list[ImportedRun]]:
    """Import every run in `path`.

    Args:
        fmt: `auto` or a key of `REGISTRY`.
        path: the file.

    Returns:
        The format used and the runs.

    Raises:
        ConfigError: an unknown format (the allowed ones are listed).
        TraceError: unreadable, unknown or corrupt input (naming the file, the record
            where known, and what the format expects).
    """
    importer = None if fmt == "auto" else get_importer(fmt)
    _check_file(path)
    used = detect_format(path) if importer is None else importer.name
    importer = REGISTRY[used]
    try:
        runs = importer.load(path)
    except TraceError:
        raise
    except _DATA_ERRORS as exc:
        detail = str(exc) if isinstance(exc, BadValue) else f"{type(exc).__name__}: {exc}"
        raise TraceError(
            f"not a usable {used} file ({detail:.300}); expected {importer.expects}",
            path=str(path),
        ) from None
    return used, runs


def _check_file(path: Path) -> None:
    if not path.exists():
        raise TraceError("no such file", path=str(path))
    if not path.is_file():
        raise TraceError("not a regular file", path=str(path))


def _looks_like(head: Head) -> str:
    if head.bad_byte is not None:
        return f"not a UTF-8 text file (invalid byte at offset {head.bad_byte})"
    if head.zip_names is not None:
        return "a zip of no known format"
    if head.first_line is not None and head.more_lines:
        return "line 1: JSON lines of no known format"
    if re.match(r'\s*[\[{]\s*["\[{}\]0-9tfn-]', head.text):
        return "JSON of no known format"
    return "line 1: neither JSON nor JSON lines"
