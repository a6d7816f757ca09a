"""`EventCollector`: received events by run (source, key), and the runs that are done.

Events have no root to say a run is over: a run is done when `settle_s` passed without a
new event for it (the receiver uses its stale time, 60 s: the CLIs export logs in
batches every few seconds), or at shut-down (`drain`). Events of a run that arrive after
it was written make a later part (a run of its own). Events of no known source, or of no
run (no prompt or session id), are counted, never buffered; a buffered event keeps only
the attributes its source reads (`TelemetrySource.kept`). Unlike spans, events are not
journalled: Ctrl-C and SIGTERM write them, a SIGKILL loses the buffered ones.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace

from looplab.traces.collect.logs import LogRecord
from looplab.traces.collect.spans import BadRequest
from looplab.traces.collect.telemetry.registry import source_of

__all__ = ["EventCollector", "FinishedEvents"]


@dataclass
class FinishedEvents:
    """The events of one run, ready to become a run."""

    source: str
    key: str
    records: list[LogRecord]
    part: int


@dataclass
class _Pending:
    records: list[LogRecord] = field(default_factory=list)
    last_seen: float = 0.0


class EventCollector:
    """Events by run (see the module docstring).

    Args:
        settle_s: seconds without a new event before a run is done.
        max_events: most events buffered in all (a request past it: 503, retryable).
    """

    def __init__(self, settle_s: float = 60.0, max_events: int = 1_000_000) -> None:
        self.settle_s = settle_s
        self.max_events = max_events
        self._pending: dict[tuple[str, str], _Pending] = {}
        self._parts: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self.requests = 0
        self.events = 0
        self.ignored = 0
        self.buffered = 0
        self.last_request = time.monotonic()

    def add(self, records: list[LogRecord]) -> None:
        """Buffer one request's events of a known source and run (thread-safe).

        Raises:
            BadRequest: the buffer cap would be passed (503); nothing is kept.
        """
        now = time.monotonic()
        keyed: list[tuple[tuple[str, str], LogRecord]] = []
        for record in records:
            source = source_of(record)
            run = source.run_key(record) if source is not None else None
            if source is not None and run:
                slim = {k: v for k, v in record.attributes.items() if k in source.kept}
                keyed.append(((source.name, run), replace(record, attributes=slim, resource={})))
        with self._lock:
            self.requests += 1
            self.last_request = now
            if self.buffered + len(keyed) > self.max_events:
                raise BadRequest(
                    f"{self.buffered} events buffered + {len(keyed)} would pass the cap of "
                    f"{self.max_events}; retry once runs are written",
                    503,
                )
            self.events += len(keyed)
            self.ignored += len(records) - len(keyed)
            self.buffered += len(keyed)
            for key, record in keyed:
                pending = self._pending.setdefault(key, _Pending())
                pending.records.append(record)
                pending.last_seen = now

    def finished(self, now: float | None = None) -> list[FinishedEvents]:
        """Take the runs without a new event for `settle_s` (monotonic seconds)."""
        moment = time.monotonic() if now is None else now
        with self._lock:
            done = [k for k, p in self._pending.items() if moment - p.last_seen >= self.settle_s]
            return [self._take(k) for k in done]

    def drain(self) -> list[FinishedEvents]:
        """Take every buffered run (shut-down)."""
        with self._lock:
            return [self._take(k) for k in list(self._pending)]

    def pending(self) -> int:
        """How many runs are buffered."""
        with self._lock:
            return len(self._pending)

    def _take(self, key: tuple[str, str]) -> FinishedEvents:
        pending = self._pending.pop(key)
        self.buffered -= len(pending.records)
        part = self._parts.get(key, 0) + 1
        self._parts[key] = part
        return FinishedEvents(key[0], key[1], pending.records, part)
