"""Reading and writing traces: append-only JSONL, secrets scrubbed, never half-written.

`TraceWriter` appends one line per event and flushes it, so a killed run leaves a valid
prefix (header + the events so far) and no `run_end`: readers call that incomplete.
`write_trace` writes a whole trace atomically (temporary file, fsync, rename), for
importers and converters. Every string is passed through a `Scrubber` on the way out.
`read_trace` also reads gzip-compressed traces (`*.jsonl.gz`, as the corpus ships them).
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO

from pydantic import TypeAdapter, ValidationError

from looplab.errors import TraceError
from looplab.traces.schema import (
    READ_FORMATS,
    ModelCallEvent,
    RunEndEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
    TraceHeader,
)
from looplab.traces.scrub import Scrubber
from looplab.traces.structure import structure_problem

__all__ = ["RunEvents", "Trace", "TraceWriter", "main_steps", "read_trace", "write_trace"]

_EVENT = TypeAdapter[TraceEvent](TraceEvent)


@dataclass
class RunEvents:
    """One run's events of a trace (`Trace.run_events`), by kind, in file order."""

    events: list[TraceEvent] = field(default_factory=list)
    model_calls: list[ModelCallEvent] = field(default_factory=list)
    tool_calls: list[ToolCallEvent] = field(default_factory=list)
    steps: list[StepEvent] = field(default_factory=list)

    def add(self, event: TraceEvent) -> None:
        """File `event` under its kind."""
        self.events.append(event)
        if isinstance(event, ModelCallEvent):
            self.model_calls.append(event)
        elif isinstance(event, ToolCallEvent):
            self.tool_calls.append(event)
        elif isinstance(event, StepEvent):
            self.steps.append(event)


@dataclass
class Trace:
    """A parsed trace: header, events in file order, and whether it ended."""

    header: TraceHeader
    events: list[TraceEvent] = field(default_factory=list)
    path: Path | None = None
    _runs: tuple[list[TraceEvent], int, dict[str | None, RunEvents]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def run_events(self, subrun: str | None) -> RunEvents:
        """The events of one run of the tree (None: the top-level run), by kind, in file
        order. One pass over the trace indexes every run, kept while `events` is the same
        list of the same length (appending or assigning a new list indexes again), so views
        that walk each of 1,000 sub-runs stay linear."""
        kept = self._runs
        if kept is None or kept[0] is not self.events or kept[1] != len(self.events):
            runs: dict[str | None, RunEvents] = {}
            for event in self.events:
                runs.setdefault(event.subrun, RunEvents()).add(event)
            kept = self._runs = (self.events, len(self.events), runs)
        return kept[2].get(subrun) or RunEvents()

    @property
    def complete(self) -> bool:
        """True when the last event is a `run_end`."""
        return bool(self.events) and isinstance(self.events[-1], RunEndEvent)

    @property
    def end(self) -> RunEndEvent | None:
        """The `run_end` event, if the run ended."""
        last = self.events[-1] if self.events else None
        return last if isinstance(last, RunEndEvent) else None

    def model_calls(self) -> list[ModelCallEvent]:
        """Model calls in order."""
        return [e for e in self.events if isinstance(e, ModelCallEvent)]

    def tool_calls(self) -> list[ToolCallEvent]:
        """Tool calls in order."""
        return [e for e in self.events if isinstance(e, ToolCallEvent)]

    def steps(self) -> list[StepEvent]:
        """Step summaries in order."""
        return [e for e in self.events if isinstance(e, StepEvent)]


def main_steps(trace: Trace) -> int:
    """Steps of the main agent (the top-level run): its step events, else its model
    calls' distinct steps; sub-agents' steps are not counted (their model calls are)."""
    steps = [s for s in trace.steps() if s.subrun is None]
    if steps:
        return len(steps)
    return len({c.step for c in trace.model_calls() if c.subrun is None})


class TraceWriter:
    """Appends events to one trace file as they happen.

    Args:
        path: the `.jsonl` file to create (its parent is created; an existing file is an
            error, so a trace is never appended to by two runs).
        header: the first line.
        scrubber: removes secrets from every string; the default knows common key shapes.

    Raises:
        TraceError: when the file already exists.
    """

    def __init__(self, path: Path, header: TraceHeader, scrubber: Scrubber | None = None) -> None:
        self.path = path
        self.scrubber = scrubber or Scrubber()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = None
        self._create(self._line(header.model_dump(mode="json")))
        self._file = path.open("a", encoding="utf-8")

    def _create(self, header_line: str) -> None:
        """Create the file holding its header, atomically: the header goes to a temporary
        file that is then hard-linked to `path` (which fails if `path` exists), so no reader
        and no kill ever sees the trace without its header."""
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            with temporary.open("w", encoding="utf-8") as handle:
                handle.write(header_line)
            os.link(temporary, self.path)
        except FileExistsError:
            raise TraceError(
                "trace already exists; refusing to append", path=str(self.path)
            ) from None
        finally:
            temporary.unlink(missing_ok=True)

    def write(self, event: TraceEvent) -> None:
        """Append one event and flush it to the OS."""
        self._write_line(event.model_dump(mode="json"))

    def write_all(self, events: Iterable[TraceEvent]) -> None:
        """Append several events."""
        for event in events:
            self.write(event)

    def close(self) -> None:
        """Flush to disk and close; idempotent."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _line(self, data: object) -> str:
        """One JSON line, secrets scrubbed."""
        text = json.dumps(self.scrubber.scrub(data), ensure_ascii=False, separators=(",", ":"))
        return text + "\n"

    def _write_line(self, data: object) -> None:
        if self._file is None:
            raise TraceError("trace writer is closed", path=str(self.path))
        self._file.write(self._line(data))
        self._file.flush()


def write_trace(
    path: Path,
    header: TraceHeader,
    events: Sequence[TraceEvent],
    scrubber: Scrubber | None = None,
) -> None:
    """Write a whole trace atomically: readers see all of it or none of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    tmp_path = Path(temporary)
    try:
        tmp_path.unlink()
        with TraceWriter(tmp_path, header, scrubber) as writer:
            writer.write_all(events)
        os.replace(tmp_path, path)
    finally:
        tmp_path.unlink(missing_ok=True)


def _trace_bytes(path: Path) -> bytes:
    """The file's bytes; `*.gz` traces (the shipped corpus) are decompressed."""
    if path.name.endswith(".gz"):
        with gzip.open(path, "rb") as handle:
            return handle.read()
    return path.read_bytes()


def read_trace(path: Path) -> Trace:
    """Parse a trace file (`.jsonl`, or `.jsonl.gz` compressed).

    A torn last line (a run killed mid-write, even in the middle of a UTF-8 character) is
    dropped: the trace is then incomplete. NaN and infinite numbers are refused.

    Raises:
        TraceError: missing or non-regular file (a FIFO is never opened), a header of
            another format, a corrupt line before the last (named by its number and,
            for bytes that are not UTF-8, the byte offset in the file), or a run graph
            that is not a tree (`looplab.traces.structure`).
    """
    try:
        if not path.is_file():
            problem = "no such file" if not path.exists() else "not a regular file"
            raise TraceError(f"cannot read trace: {problem}", path=str(path))
        raw = _trace_bytes(path)
    except OSError as exc:
        raise TraceError(f"cannot read trace: {exc.strerror or exc}", path=str(path)) from None
    except (EOFError, zlib.error):
        raise TraceError("cut-off or damaged gzip data", path=str(path)) from None
    lines = _lines(raw, path)
    if not lines:
        raise TraceError("empty file, no trace header", path=str(path))
    header = _header(lines[0], path)
    trace = Trace(header=header, path=path)
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            trace.events.append(_EVENT.validate_json(line))
        except ValidationError as exc:
            if number == len(lines):
                break  # torn final line of a killed run
            detail = exc.errors()[0]
            where = ".".join(str(p) for p in detail["loc"])
            raise TraceError(
                f"line {number}: bad event ({where}: {detail['msg']})", path=str(path)
            ) from None
    wrong = structure_problem(trace.events)
    if wrong is not None:
        raise TraceError(
            f"bad sub-run structure: {wrong} (refused rather than re-timed on a broken tree)",
            path=str(path),
        )
    return trace


def _lines(raw: bytes, path: Path) -> list[str]:
    """The file's lines as text; an undecodable last line (torn mid-character) is dropped."""
    parts = raw.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    lines: list[str] = []
    offset = 0
    for number, part in enumerate(parts, start=1):
        try:
            lines.append(part.decode("utf-8"))
        except UnicodeDecodeError as exc:
            if number == len(parts) and number > 1:
                break  # torn final line
            raise TraceError(
                f"line {number}: not UTF-8 (byte 0x{part[exc.start]:02x} at offset "
                f"{offset + exc.start})",
                path=str(path),
            ) from None
        offset += len(part) + 1
    return lines


def _header(line: str, path: Path) -> TraceHeader:
    try:
        first = json.loads(line)
    except ValueError:
        raise TraceError("line 1 is not JSON; not a looplab trace", path=str(path)) from None
    if not isinstance(first, dict) or first.get("trace_format") not in READ_FORMATS:
        found = first.get("trace_format") if isinstance(first, dict) else None
        raise TraceError(
            f"line 1 is not a looplab trace header (trace_format={found!r}; allowed: "
            f"{', '.join(READ_FORMATS)}); "
            "other harnesses' files go through `looplab import`",
            path=str(path),
        )
    try:
        return TraceHeader.model_validate(first)
    except ValidationError as exc:
        raise TraceError(f"line 1: bad header: {exc.errors()[0]['msg']}", path=str(path)) from None
