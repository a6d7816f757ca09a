"""The collector's journal: every accepted span on disk before its request is answered.

`OUTPUT/.collect/<trace id>.spans` holds one JSON line per accepted span (appended and
fsynced before the 200), and, once a part of the trace is written as a run, a first line
`{"written": N, "ids": [...]}`: the parts written so far and the span ids they held. So:

- a kill before the settle time loses nothing: `recover()` hands the spans not yet written
  back to the collector at the next start;
- a re-sent export is idempotent: a span id already journalled is not taken again;
- a kill between writing a run and marking it leaves the part unmarked, and the restart
  writes the same part again under the same run id: the same file, not a second one.

The files end in `.spans`, not `.jsonl`, so no reader of traces takes them for traces. A
torn last line (a kill mid-append) is skipped. `lock()` keeps one collector per directory.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from looplab.errors import ConfigError
from looplab.traces.collect.spans import Span, SpanEvent

__all__ = ["JOURNAL_DIR", "Journal", "Recovered", "clean_stale_temporaries"]

JOURNAL_DIR = ".collect"
_FIELDS = tuple(f.name for f in dataclasses.fields(Span))


@dataclass
class Recovered:
    """One trace's journal read back: parts written, ids seen, spans not yet written."""

    written: int = 0
    seen: set[str] = field(default_factory=set)
    pending: list[Span] = field(default_factory=list)


class Journal:
    """The span journal of one output directory (thread-safe)."""

    def __init__(self, output: Path) -> None:
        self.directory = output / JOURNAL_DIR
        self._lock = threading.Lock()
        self._lock_handle: IO[str] | None = None

    def lock(self) -> None:
        """Take the directory's collector lock (released when the process ends).

        Raises:
            ConfigError: another `looplab collect` writes to this directory.
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        handle = (self.directory / "lock").open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise ConfigError(
                f"another looplab collect writes to {self.directory.parent}", field="--output"
            ) from None
        self._lock_handle = handle

    def append(self, spans: list[Span]) -> None:
        """Append `spans` to their traces' journals and fsync them (before the 200)."""
        by_trace: dict[str, list[str]] = {}
        for span in spans:
            by_trace.setdefault(span.trace_id, []).append(json.dumps(_record(span)))
        with self._lock:
            for trace_id, lines in by_trace.items():
                with self._path(trace_id).open("a", encoding="utf-8") as handle:
                    handle.write("\n".join(lines) + "\n")
                    handle.flush()
                    os.fsync(handle.fileno())

    def mark_written(self, trace_id: str, part: int, ids: set[str]) -> None:
        """Record that `part` of the trace (the spans `ids`) is written: the journal keeps
        their ids only, and the spans received since (atomic replace, fsynced)."""
        with self._lock:
            path = self._path(trace_id)
            state = _read(path)
            pending = {s.span_id for s in state.pending}  # once: linear in the spans
            seen = {i for i in state.seen if i not in pending} | ids
            later = [s for s in state.pending if s.span_id not in ids]
            lines = [json.dumps({"written": max(part, state.written), "ids": sorted(seen)})]
            lines += [json.dumps(_record(s)) for s in later]
            temporary = path.with_name(f".{path.name}.tmp")
            with temporary.open("w", encoding="utf-8") as handle:
                handle.write("\n".join(lines) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            temporary.replace(path)

    def recover(self) -> dict[str, Recovered]:
        """Every journalled trace: its parts written, ids seen and spans still to write."""
        if not self.directory.is_dir():
            return {}
        for stale in self.directory.glob(".*.tmp"):
            stale.unlink(missing_ok=True)
        with self._lock:
            return {p.stem: _read(p) for p in sorted(self.directory.glob("*.spans"))}

    def _path(self, trace_id: str) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        return self.directory / f"{trace_id}.spans"


def clean_stale_temporaries(output: Path) -> list[Path]:
    """Remove the `.<name>.jsonl.*.tmp` files a writer killed mid-write left in `output`."""
    if not output.is_dir():
        return []
    stale = [p for p in output.glob(".*.jsonl.*.tmp") if p.is_file()]
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def _read(path: Path) -> Recovered:
    """A journal file read back (a missing file is empty; a torn line is skipped)."""
    state = Recovered()
    if not path.is_file():
        return state
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn last line: that request was never answered 200
            if not isinstance(record, dict):
                continue
            if "written" in record:
                state.written = int(record["written"])
                state.seen.update(str(i) for i in record.get("ids") or [])
                state.pending = []
                continue
            span = _span(record)
            if span is not None and span.span_id not in state.seen:
                state.seen.add(span.span_id)
                state.pending.append(span)
    return state


def _record(span: Span) -> dict[str, Any]:
    """A span as a JSON object (its fields; events as name/time objects)."""
    record = {name: getattr(span, name) for name in _FIELDS}
    record["events"] = [{"name": e.name, "time": e.time} for e in span.events]
    return record


def _span(record: dict[str, Any]) -> Span | None:
    """A journalled span, None when the line is not one."""
    try:
        events = tuple(SpanEvent(**e) for e in record.pop("events", []))
        repaired = tuple(str(note) for note in record.pop("repaired", []))
        return Span(**record, events=events, repaired=repaired)
    except TypeError:
        return None
