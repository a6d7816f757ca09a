"""Writing imported runs: one trace per run, named by its source identity, never overwriting.

A run's id is `<the source's id>.<digest of the source file and the run's key>`
(`build.imported_run_id`), and its file is `<run_id>.jsonl`. So 41 mini-swe-agent files of
22 instances give 41 traces, and importing the same file again rewrites its own traces
(idempotent). A file already there that holds another run (renamed by hand, or a digest
collision) is never replaced: the new trace gets `-2`, `-3`, ... instead.
"""

from __future__ import annotations

import json
from pathlib import Path

from looplab.errors import TraceError
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.io import write_trace

__all__ = ["write_runs"]


def write_runs(runs: list[ImportedRun], output: Path) -> list[Path]:
    """Write each run to `output/<run_id>.jsonl` (atomically; see the module doc).

    Returns:
        The files written, in the order of `runs`.
    """
    output.mkdir(parents=True, exist_ok=True)
    taken: set[Path] = set()
    paths = []
    for run in runs:
        target = _free_name(output, run.header.run_id, taken)
        write_trace(target, run.header, run.events)
        taken.add(target)
        paths.append(target)
    return paths


def _free_name(output: Path, run_id: str, taken: set[Path]) -> Path:
    """`run_id.jsonl` unless another run holds it, else the first free `run_id-N.jsonl`."""
    for n in range(1, 10_000):
        target = output / (f"{run_id}.jsonl" if n == 1 else f"{run_id}-{n}.jsonl")
        if target in taken:
            continue
        if not target.exists() or (target.is_file() and _run_id_of(target) == run_id):
            return target
    raise TraceError(f"no free file name for run {run_id}", path=str(output))


def _run_id_of(path: Path) -> str | None:
    """The run id in a trace file's header, None when it is not a readable trace."""
    try:
        with path.open(encoding="utf-8") as handle:
            header = json.loads(handle.readline())
    except (OSError, ValueError):
        return None
    run_id = header.get("run_id") if isinstance(header, dict) else None
    return run_id if isinstance(run_id, str) else None
