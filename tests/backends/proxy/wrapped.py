"""Helpers of the wrap tests: `looplab wrap` as a user runs it, and what its trace says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from looplab.traces.io import Trace, read_trace


def run_wrap(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m looplab wrap ARGS` in `cwd` (no log file), its output captured."""
    command = [sys.executable, "-m", "looplab", "--no-log-file", "wrap", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


def only_trace(directory: Path) -> Trace:
    """The one trace a wrapped run wrote in `directory`."""
    (path,) = directory.glob("*.jsonl")
    return read_trace(path)


def decode_rate(trace: Trace) -> float:
    """Decode rate over the run: sum of (streamed tokens - 1) / sum of decode times."""
    calls = [c for c in trace.model_calls() if c.decode_s and (c.output_tokens or 0) > 1]
    return sum((c.output_tokens or 0) - 1 for c in calls) / sum(c.decode_s or 0 for c in calls)
