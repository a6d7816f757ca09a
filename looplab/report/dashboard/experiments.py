"""What the dashboard knows about a root directory: its experiments (named as their
configs name them), their built reports (cached until a trace changes), whether they are
still running, and every run of a task across the root.

Nothing here trusts a path from a request: `resolve_inside` confines every one to the
root. An experiment that cannot be read is kept with its error (the index lists it), so
one bad trace never takes the rest down.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from looplab.errors import ConfigError, LooplabError
from looplab.layout import TRACE_SUFFIXES, ExperimentDir
from looplab.report.build import build_model_for
from looplab.report.data.records import RunRecord
from looplab.report.views.report_model import ReportModel
from looplab.traces.inputs import find_trace_files

__all__ = [
    "RUNNING_WINDOW_S",
    "Experiment",
    "PathRefused",
    "Reports",
    "discover_experiments",
    "resolve_inside",
]

_MAX_DEPTH = 4
RUNNING_WINDOW_S = 600.0
"""An experiment with an unfinished trace written to within this many seconds is running."""


class PathRefused(Exception):
    """A requested path is outside the root (403) or not a report input (404)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def resolve_inside(root: Path, relative: str, *, file_only: bool = False) -> Path:
    """`root / relative`, resolved, if it stays inside `root` and is a report input.

    Raises:
        PathRefused: 403 for paths that leave the root, 404 for ones that are not an
            experiment directory, a directory of traces or a trace file (or, with
            `file_only`, not a trace file), or that cannot be read.
    """
    base = root.resolve()
    if "\x00" in relative or relative.startswith(("/", "\\")) or ":" in relative[:3]:
        raise PathRefused(403, "absolute paths are refused")
    if any(len(part) > 255 for part in relative.split("/")):
        raise PathRefused(404, "no such experiment or trace (a path component is too long)")
    try:
        candidate = (base / relative).resolve()
        if not candidate.is_relative_to(base):
            raise PathRefused(403, "outside the dashboard root")
        if candidate.is_file() and candidate.name.endswith(TRACE_SUFFIXES):
            return candidate
        if candidate.is_dir() and not file_only:
            find_trace_files(candidate)
            return candidate
    except (OSError, LooplabError):
        raise PathRefused(404, "no traces there") from None
    raise PathRefused(404, "no such trace file" if file_only else "no such experiment or trace")


def discover_experiments(root: Path) -> list[Path]:
    """Directories under `root` (itself included) holding `traces/*.jsonl` or `*.jsonl`
    (symbolic links and hidden directories are not followed; unreadable ones skipped)."""
    found: list[Path] = []

    def holds_traces(directory: Path) -> bool:
        return any(
            any(d.glob(f"*{suffix}"))
            for d in (directory, ExperimentDir(directory).traces)
            for suffix in TRACE_SUFFIXES
        )

    def walk(directory: Path, depth: int) -> None:
        try:
            if holds_traces(directory):
                found.append(directory)
                return
            children = sorted(directory.iterdir()) if depth < _MAX_DEPTH else []
        except OSError:
            return
        for child in children:
            if child.is_dir() and not child.name.startswith(".") and not child.is_symlink():
                walk(child, depth + 1)

    if root.is_dir():
        walk(root.resolve(), 0)
    return found


@dataclass
class Experiment:
    """One experiment directory (or directory of traces) under the root."""

    path: Path
    rel: str
    name: str
    description: str = ""
    error: str | None = None
    model: ReportModel | None = None
    records: list[RunRecord] = field(default_factory=list)
    unfinished: int = 0
    """Trace files without their `run_end` (runs in progress, or cut off)."""
    newest_unfinished: float = 0.0
    """Modification time (epoch seconds) of the newest unfinished trace."""
    signature: tuple[int, float] = (0, 0.0)
    html: str | None = None
    """Its report page, once rendered (dropped with the experiment when a trace changes)."""

    @property
    def running(self) -> bool:
        """An unfinished trace written to within `RUNNING_WINDOW_S` of now (recomputed on
        every look: a cached experiment whose traces stopped changing stops running)."""
        if self.error is not None or not self.unfinished:
            return False
        now = datetime.now(UTC).timestamp()  # file mtimes are epoch seconds
        return now - self.newest_unfinished < RUNNING_WINDOW_S


def _config(path: Path) -> dict[str, object]:
    try:
        data = json.loads(ExperimentDir(path).config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def last_line(file: Path, *, chunk: int = 65536) -> bytes:
    """The last non-empty line of `file`, however long it is (read backwards in chunks
    until a newline precedes it; a `run_end` line of a workload trace runs to many KB)."""
    with file.open("rb") as handle:
        end = handle.seek(0, 2)
        tail = b""
        position = end
        while position > 0:
            step = min(chunk, position)
            position -= step
            handle.seek(position)
            tail = handle.read(step) + tail
            stripped = tail.rstrip()
            if b"\n" in stripped:
                return stripped.rsplit(b"\n", 1)[-1]
        return tail.rstrip()


def _ended(line: bytes) -> bool:
    """Whether a trace's last line is its `run_end` event (parsed, not searched for)."""
    try:
        event = json.loads(line)
    except ValueError:
        return False  # a torn last line: the run was cut off mid-write
    return isinstance(event, dict) and event.get("kind") == "run_end"


def _unfinished(files: list[Path]) -> tuple[int, float]:
    """How many traces lack a `run_end`, and the newest modification time of those
    (compressed traces are written whole, so they are finished)."""
    count, newest = 0, 0.0
    for file in files:
        if file.suffix == ".gz":
            continue
        try:
            if not _ended(last_line(file)):
                count += 1
                newest = max(newest, file.stat().st_mtime)
        except OSError:
            continue
    return count, newest


class Reports:
    """Experiments and their reports under one root, rebuilt when their traces change."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._lock = threading.Lock()
        self._experiments: dict[Path, Experiment] = {}

    def relative(self, path: Path) -> str:
        """`path` relative to the root, as used in URLs (`.` for the root itself)."""
        return path.relative_to(self.root).as_posix() or "."

    def experiment(self, path: Path) -> Experiment:
        """The experiment at `path` (a directory under the root), its report model built
        or taken from the cache; its error instead when it cannot be read."""
        try:
            files = find_trace_files(path)
            signature = (len(files), max((f.stat().st_mtime for f in files), default=0.0))
        except (OSError, LooplabError) as exc:
            return Experiment(path, self.relative(path), path.name, error=str(exc))
        with self._lock:
            cached = self._experiments.get(path)
            if cached is not None and cached.signature == signature:
                return cached
        config = _config(path)
        name = str(config.get("name") or path.name)
        found = Experiment(
            path,
            self.relative(path),
            name,
            str(config.get("description") or ""),
            signature=signature,
        )
        found.unfinished, found.newest_unfinished = _unfinished(files)
        try:
            found.model, found.records = build_model_for([path], title=f"looplab report: {name}")
        except (LooplabError, OSError, ValueError) as exc:
            # no complete run while every trace is in progress: no report yet, not an error
            waiting = isinstance(exc, ConfigError) and found.unfinished == len(files)
            found.error = None if waiting else str(exc)
        with self._lock:
            self._experiments[path] = found
        return found

    def experiments(self) -> list[Experiment]:
        """Every experiment under the root, in path order."""
        return [self.experiment(path) for path in discover_experiments(self.root)]

    def runs_of(self, task: str) -> list[tuple[Experiment, RunRecord]]:
        """Every run of `task` under the root, with its experiment."""
        return [
            (experiment, record)
            for experiment in self.experiments()
            for record in experiment.records
            if record.task == task
        ]

    def state(self, path: Path | None) -> dict[str, object]:
        """What live refresh polls: a signature of the traces, and whether it is running."""
        targets = [path] if path is not None else discover_experiments(self.root)
        experiments = [self.experiment(target) for target in targets]
        return {
            "signature": live_signature(experiments),
            "running": any(experiment.running for experiment in experiments),
        }


def live_signature(experiments: list[Experiment]) -> str:
    """What live refresh compares: each experiment's path, trace count, newest write and
    unfinished count (a page built from these experiments carries it)."""
    return json.dumps([[e.rel, *e.signature, e.unfinished] for e in experiments])
