"""What `looplab run` shows while it works: a line per finished cell and a live status.

The live status names every running cell with its elapsed time, step and phase
(`starting`, `model`, `tools`). On a terminal it is one line redrawn in place; in a log
(not a terminal) a status line is printed every `LOG_INTERVAL_S` seconds instead, so a
long cell is never silent.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.text import Text

from looplab.experiments.runner import CellOutcome

__all__ = ["LOG_INTERVAL_S", "SATURATION_LAG_MS", "RunProgress"]

SATURATION_LAG_MS = 20.0
"""Event-loop lag (p99) above which a run's timings are flagged as suspect."""
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
        """`running: <cell> 12.3 s step 4 model | ...` for the cells in flight."""
        now = time.perf_counter()
        with self._lock:
            parts = [
                f"{cell} {now - r.started:.1f} s step {r.step} {_PHASES.get(r.phase, r.phase)}"
                for cell, r in self._running.items()
            ]
        return ("running: " + " | ".join(parts)) if parts else ""

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
        verdict = "solved" if outcome.success else "[yellow]NOT solved[/]"
        line = f"{done}/{total} {cell.id}: {outcome.steps} steps, {outcome.task_s:.2f} s, {verdict}"
        return clock + line + _saturation_note(outcome.loop_lag_p99_ms)


def _saturation_note(lag: Any) -> str:
    if lag is None or lag <= SATURATION_LAG_MS:
        return ""
    return (
        f" [yellow](event loop lagged {lag:.0f} ms p99: the machine is saturated, "
        "timings are suspect; lower concurrency)[/]"
    )
