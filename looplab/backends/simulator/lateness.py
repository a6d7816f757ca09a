"""The simulator says when it falls behind its schedule.

A release is late when it leaves more than `threshold_s` (5 ms, assumed: well above the
0-1 ms a wake-up costs on an idle loop, well below a token gap a client notices at
750 tok/s over several chunks) after its first slot's intended time. Late releases are
counted per server, the worst lateness is kept, and one warning is logged per burst (a
burst ends after `burst_gap_s` with no late release), so an overloaded server logs a line
per episode, not per chunk. `GET /health` reports the figures (`health`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import structlog

from looplab.backends.simulator.pacing import PacingRecord, Release
from looplab.clock import Clock

__all__ = ["LATE_THRESHOLD_S", "LatenessWatch"]

log = structlog.get_logger(__name__)

LATE_THRESHOLD_S = 0.005
"""Release lateness counted as falling behind (assumed; see the module docstring)."""


@dataclass
class LatenessWatch:
    """Counts releases later than `threshold_s`; logs once per burst of them."""

    threshold_s: float = LATE_THRESHOLD_S
    burst_gap_s: float = 1.0
    late_releases: int = 0
    worst_s: float = 0.0
    bursts: int = 0
    _last_late: float = -math.inf

    def observe(self, record: PacingRecord, release: Release, clock: Clock, streams: int) -> None:
        """One `release` of `record` with `streams` active (a virtual clock is never late)."""
        if clock.virtual:  # checked first: this runs once per released chunk
            return
        lateness_s = release.actual - record.intended(release.start)
        if lateness_s <= self.threshold_s:
            return
        now = release.actual
        self.late_releases += 1
        self.worst_s = max(self.worst_s, lateness_s)
        if now - self._last_late > self.burst_gap_s:
            self.bursts += 1
            log.warning(
                "simulator.behind_schedule",
                lateness_ms=round(lateness_s * 1000, 1),
                threshold_ms=self.threshold_s * 1000,
                streams=streams,
                late_releases=self.late_releases,
            )
        self._last_late = now

    def health(self) -> dict[str, float | int]:
        """The figures `GET /health` reports."""
        return {
            "late_releases": self.late_releases,
            "late_bursts": self.bursts,
            "worst_lateness_ms": round(self.worst_s * 1000, 3),
            "lateness_threshold_ms": self.threshold_s * 1000,
        }
