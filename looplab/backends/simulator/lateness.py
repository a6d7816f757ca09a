"""The simulator says when it falls behind its schedule.

A release is late when it leaves more than `threshold_s` (5 ms, assumed: well above the
0-1 ms a wake-up costs on an idle loop, well below a token gap a client notices at
750 tok/s over several chunks) after its first slot's intended time. Late releases are
counted per server, the worst lateness is kept, and one warning is logged per burst (a
burst ends after `burst_gap_s` with no late release), so an overloaded server logs a line
per episode, not per chunk. `GET /health` reports the figures (`health`).

What it means for results: the pacer keeps each stream on its schedule (lateness does not
accumulate: the next chunk keeps its intended time), so a late release delays the tokens
of that one chunk by its lateness, and the traces record the actual arrival times: task
times include it (on the wall clock; a virtual clock is never late). A host running many
cells at once (an experiment) sets `log_bursts` False and logs one summary at the end
instead (`behind_schedule_words`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import structlog

from looplab.backends.simulator.pacing import PacingRecord, Release
from looplab.clock import Clock

__all__ = ["LATE_THRESHOLD_S", "NEGLIGIBLE_MS", "LatenessWatch", "behind_schedule_words"]

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
    log_bursts: bool = True
    """Log a warning per burst (False: the owner logs one summary at the end)."""
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
            if not self.log_bursts:
                self._last_late = now
                return
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


NEGLIGIBLE_MS = 50.0
"""Worst lateness (ms) under which `behind_schedule_words` calls the effect negligible (a
chosen bound, assumed: 4 tokens' time at 80 tok/s, under 1% of a typical model call)."""


def behind_schedule_words(watches: list[LatenessWatch]) -> str | None:
    """One line on every watch's late releases and what they mean for the results (None:
    none was late): negligible under `NEGLIGIBLE_MS`, else wall-clock figures understated."""
    late = sum(w.late_releases for w in watches)
    if not late:
        return None
    bursts = sum(w.bursts for w in watches)
    worst_ms = max(w.worst_s for w in watches) * 1000
    threshold_ms = watches[0].threshold_s * 1000
    what = (
        "At this size the effect on task times is negligible."
        if worst_ms < NEGLIGIBLE_MS
        else "Delays this large make wall-clock task times longer than the profile says and "
        "understate the speedup: rerun on a quieter machine or with fewer cells at once "
        "(-s concurrency=1)."
    )
    return (
        f"the simulator released {late} chunk(s) in {bursts} burst(s) more than "
        f"{threshold_ms:g} ms behind schedule (worst {worst_ms:.1f} ms; the machine was "
        "busy). Each late chunk's tokens arrived up to that much later, the schedule does "
        "not drift (later chunks keep their times) and the traces record the actual times, "
        f"so wall-clock task times include the delay; virtual-clock runs are unaffected. {what}"
    )
