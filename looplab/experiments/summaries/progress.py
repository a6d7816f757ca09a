"""What `looplab run` shows while it works: a line per finished cell and a live status.

The live status names every running cell with its elapsed time, step and phase
(`starting`, `model`, `tools`). On a terminal it is one line redrawn in place; in a log
(not a terminal) a status line is printed every `LOG_INTERVAL_S` seconds instead, so a
long cell is never silent. A finished cell's time is labelled `virtual` when its model
times were computed on the virtual clock (it is not the wall time it took).

The lag warning: a saturated machine wakes the run's coroutines late, and each late
wake-up on a step's critical path (the reply's end, the tool's result: `WAKEUPS_PER_STEP`)
adds to the task time it measures. The expected addition is the run's mean lag times
`WAKEUPS_PER_STEP` times its steps; the line warns only when that exceeds `LAG_SHARE` (1%)
of the task time, the resolution at which the report quotes task times and speedups (a
1% shift moves a 2.50x to 2.47x). Below that, lag cannot change a reported number.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from rich.console import Console
from rich.live import Live
from rich.text import Text

from looplab.experiments.outcome import CellOutcome
from looplab.traces.end_reason import EndReason

__all__ = ["LAG_SHARE", "LOG_INTERVAL_S", "WAKEUPS_PER_STEP", "RunProgress", "lag_share"]

LAG_SHARE = 0.01
"""The share of a task's time that lag may add before its line warns (module doc)."""
WAKEUPS_PER_STEP = 2
"""Event-loop wake-ups on a step's critical path: the model reply's end, the tool result."""
LOG_INTERVAL_S = 30.0
"""Seconds between status lines when stderr is not a terminal."""
_PHASES = {"start": "starting", "model": "model", "tools": "tools"}


@dataclass
class _Running:
    started: float
    step: int
    phase: str


class RunProgress:
    """Receives the runner's `progress` and `status` callbacks and renders them.

    Use as a context manager around the run so the live line is cleared at the end.

    Args:
        console: where to print (stderr).
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.started = time.perf_counter()
        self.ran = 0
        self._running: dict[str, _Running] = {}
        self._lock = threading.Lock()
        self._live: Live | None = None
        self._last_log = time.perf_counter()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> RunProgress:
        if self.console.is_terminal:
            self._live = Live(Text(""), console=self.console, auto_refresh=False, transient=True)
            self._live.start()
        self._ticker = threading.Thread(
            target=self._tick_loop, name="looplab-progress", daemon=True
        )
        self._ticker.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _tick_loop(self) -> None:
        while not self._stop.wait(0.5):
            self._refresh()

    def status_line(self) -> str:
        """`running 2: <cell> 12.3 s step 4 model | ...` for the cells in flight."""
        now = time.perf_counter()
        with self._lock:
            parts = [
                f"{cell} {now - r.started:.1f} s step {r.step} {_PHASES.get(r.phase, r.phase)}"
                for cell, r in self._running.items()
            ]
        return (f"running {len(parts)}: " + " | ".join(parts)) if parts else ""

    def status(self, cell_id: str, phase: str, step: int) -> None:
        """The runner's `status` callback (see `ExperimentRunner`)."""
        with self._lock:
            if phase == "end":
                self._running.pop(cell_id, None)
            elif phase == "start" or cell_id not in self._running:
                self._running[cell_id] = _Running(time.perf_counter(), step, phase)
            else:
                self._running[cell_id].step = step
                self._running[cell_id].phase = phase
        self._refresh()

    def _refresh(self) -> None:
        line = self.status_line()
        if self._live is not None:
            self._live.update(Text(line, style="dim"), refresh=True)
            return
        now = time.perf_counter()
        if line and now - self._last_log >= LOG_INTERVAL_S:
            self._last_log = now
            self.console.print(f"[dim]{line}[/]", highlight=False)

    def __call__(self, outcome: CellOutcome, done: int, total: int) -> None:
        """The runner's `progress` callback: one line per finished or skipped cell."""
        self.console.print(self._finished_line(outcome, done, total), highlight=False)

    def _finished_line(self, outcome: CellOutcome, done: int, total: int) -> str:
        cell = outcome.cell
        if outcome.status == "skipped":
            return f"[dim]{done}/{total} {cell.id}: complete trace found, skipped[/]"
        self.ran += 1
        elapsed = time.perf_counter() - self.started
        remaining = total - done
        eta = f", ETA {elapsed / self.ran * remaining:.0f} s" if remaining else ""
        clock = f"[dim][{elapsed:6.1f} s{eta}][/] "
        if outcome.status == "failed":
            return clock + f"[red]{done}/{total} {cell.id}: failed: {outcome.error}[/]"
        verdict = _VERDICTS.get(outcome.end_reason or "", "[yellow]NOT solved[/]")
        if outcome.success:
            verdict = "solved"
        virtual = " virtual" if outcome.clock == "virtual" else ""
        line = (
            f"{done}/{total} {cell.id}: {outcome.steps} steps, {outcome.task_s:.2f} s{virtual}, "
            f"{verdict}"
        )
        return clock + line + _saturation_note(outcome)


_VERDICTS: dict[str, str] = {
    EndReason.TIMEOUT: "[yellow]timeout[/] (the task time cap)",
    EndReason.BACKEND_ERROR: "[red]backend error[/]",
}
"""How a cell that did not solve its task ended, where that is not the agent's doing."""


def lag_share(outcome: CellOutcome) -> float | None:
    """The share of the task time lag is expected to have added (module doc), or None."""
    lag, task_s = outcome.loop_lag_mean_ms, outcome.task_s
    if lag is None or not task_s or task_s <= 0:
        return None
    return lag / 1000 * WAKEUPS_PER_STEP * max(1, outcome.steps or 0) / task_s


def _saturation_note(outcome: CellOutcome) -> str:
    share = lag_share(outcome)
    if share is None or share <= LAG_SHARE:
        return ""
    added = share * (outcome.task_s or 0.0)
    return (
        f" [yellow](event loop lagged {outcome.loop_lag_mean_ms:.0f} ms on average: about "
        f"{added:.2f} s ({share:.0%}) of this time, over the {LAG_SHARE:.0%} a reported "
        "number resolves; lower concurrency)[/]"
    )
