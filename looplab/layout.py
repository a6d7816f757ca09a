"""An experiment directory's layout: the one place that spells its file names.

```
<output_dir>/
  config.json          the experiment's config as run (secrets scrubbed)
  traces/<cell>.jsonl  one trace per cell (looplab-1 events)
  traces/incomplete/   traces of runs that were cut off (kept, never counted)
  results.duckdb       the query store, rebuilt from the traces
  report.html          the report (`looplab report`)
  .lock                the one writer's advisory lock
```

Every reader and writer (the runner, the executors, the report, the dashboard, the trace
readers) asks an `ExperimentDir` for these paths; no other module spells them
(`tests/test_layout_strings.py` checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["TRACE_SUFFIXES", "ExperimentDir", "trace_files", "trace_path"]

TRACE_SUFFIXES = (".jsonl", ".jsonl.gz")
"""File names a trace may have (gzip-compressed traces are read too)."""


@dataclass(frozen=True)
class ExperimentDir:
    """The paths of one experiment directory (nothing is created by asking)."""

    root: Path

    @property
    def config(self) -> Path:
        """The stored config (`config.json`)."""
        return self.root / "config.json"

    @property
    def traces(self) -> Path:
        """The trace folder (`traces/`)."""
        return self.root / "traces"

    @property
    def incomplete(self) -> Path:
        """Where cut-off traces are set aside (`traces/incomplete/`)."""
        return self.traces / "incomplete"

    @property
    def store(self) -> Path:
        """The query store (`results.duckdb`)."""
        return self.root / "results.duckdb"

    @property
    def report(self) -> Path:
        """The report file (`report.html`)."""
        return self.root / "report.html"

    @property
    def lock(self) -> Path:
        """The writer's advisory lock (`.lock`)."""
        return self.root / ".lock"

    def trace(self, cell_id: str) -> Path:
        """The trace of the cell (or run) `cell_id`."""
        return trace_path(self.traces, cell_id)

    def trace_files(self) -> list[Path]:
        """The complete-or-not traces in `traces/` (not the set-aside ones), sorted."""
        return trace_files(self.traces)


def trace_path(folder: Path, run_id: str) -> Path:
    """A run's trace in `folder` (an experiment's `traces/`, or any output folder)."""
    return folder / f"{run_id}{TRACE_SUFFIXES[0]}"


def trace_files(folder: Path) -> list[Path]:
    """The traces directly in `folder`, sorted (none if it is not a folder)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(TRACE_SUFFIXES))
