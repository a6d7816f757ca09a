"""Small pieces every sandbox uses: output capping, exit codes, timing events."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime

from looplab.sandbox_contract import (
    TRUNCATION_MARKER,
    DetailValue,
    EventKind,
    EventSink,
    SandboxEvent,
)

__all__ = ["CappedOutput", "EventClock", "exit_status", "render_output"]


class CappedOutput:
    """Keeps the first `limit` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        """Args: limit: bytes to keep."""
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        """Keep what fits of `chunk`, count the rest as dropped."""
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        """Return the kept bytes as text, with the truncation marker if any were dropped."""
        return render_output(bytes(self.kept), self.dropped)


def render_output(kept: bytes, dropped: int) -> str:
    """Decode kept output (UTF-8, invalid bytes replaced) and mark dropped bytes."""
    text = kept.decode("utf-8", errors="replace")
    if dropped:
        text += TRUNCATION_MARKER.format(dropped=dropped)
    return text


def exit_status(returncode: int) -> int:
    """Map a returncode to the contract's exit code: signal N (negative) -> 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


class EventClock:
    """Times operations of one sandbox and hands them to its sink as SandboxEvents."""

    def __init__(self, sink: EventSink | None, sandbox_kind: str, isolated: bool) -> None:
        """Args: sink: receiver (None: events are dropped); sandbox_kind, isolated: stamped."""
        self.sink = sink
        self.sandbox_kind = sandbox_kind
        self.isolated = isolated

    @staticmethod
    def start() -> tuple[float, datetime]:
        """Return the monotonic and UTC wall time of an operation's start."""
        return time.monotonic(), datetime.now(UTC)

    def emit(
        self,
        kind: EventKind,
        sandbox_id: str,
        begun: tuple[float, datetime],
        detail: Mapping[str, DetailValue] | None = None,
        *,
        ended: float | None = None,
    ) -> SandboxEvent:
        """Build the event of an operation that began at `begun` and ends now (or `ended`)."""
        event = SandboxEvent(
            kind=kind,
            sandbox_id=sandbox_id,
            sandbox_kind=self.sandbox_kind,
            isolated=self.isolated,
            started=begun[0],
            ended=time.monotonic() if ended is None else ended,
            wall_time=begun[1],
            detail=dict(detail or {}),
        )
        if self.sink is not None:
            self.sink(event)
        return event
