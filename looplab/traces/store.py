"""The results store: an embedded DuckDB file indexing runs, steps, model and tool calls.

`model_calls` splits each call as the trace does: `ttft_s` (sent -> first token of any
kind: TTFT + prefill), `reasoning_s` (hidden reasoning decode, NULL when none or unknown),
`first_visible_s` (= ttft_s + reasoning_s), `decode_s` (first -> last visible token),
and its `purpose` (`planner`, `actor`, `reflection`; NULL for a step's only call).
`steps` carries the browser phases summed over the step's tool calls (`act_s`,
`page_wait_s`, `observe_s`; NULL when the step did not split its tool time).

One file per experiment directory (`results.duckdb`), next to the traces it indexes. The
traces are the source of truth; the store is rebuilt from them at any time. It holds
exactly the complete traces (those ending with `run_end`) directly in the trace
directory: cut-off runs (moved to `incomplete/` or not) are never rows, whatever sequence
of failures and reruns came before. `ResultStore.rebuild_file` writes a fresh file next to
the old one and renames it into place, so a reader holding the old file open (even the
DuckDB CLI, which locks it) never fails the writer, and a reader never sees half an index.
Query it with SQL, or load tables into pandas/polars:

```sql
SELECT backend, median(task_s), median(steps) FROM runs GROUP BY backend;
```
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import duckdb

from looplab.errors import TraceError
from looplab.latency.spec import profile_name, profile_rate
from looplab.traces.io import Trace, read_trace
from looplab.traces.schema import ModelCallEvent, RunEndEvent, StepEvent, ToolCallEvent

__all__ = ["IndexReport", "ResultStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, experiment VARCHAR, backend VARCHAR, agent VARCHAR,
    task VARCHAR, repetition INTEGER, seed BIGINT, profile VARCHAR, decode_tps DOUBLE,
    clock VARCHAR, source VARCHAR, complete BOOLEAN, end_reason VARCHAR, success BOOLEAN,
    steps INTEGER, task_s DOUBLE, model_s DOUBLE, tool_s DOUBLE, overhead_s DOUBLE,
    sandbox_start_s DOUBLE, prompt_tokens BIGINT, completion_tokens BIGINT,
    reasoning_tokens BIGINT, loop_lag_p99_ms DOUBLE, created TIMESTAMPTZ, trace_path VARCHAR
);
CREATE TABLE IF NOT EXISTS steps (
    run_id VARCHAR, step INTEGER, start_s DOUBLE, end_s DOUBLE, model_s DOUBLE,
    tool_s DOUBLE, overhead_s DOUBLE, act_s DOUBLE, page_wait_s DOUBLE, observe_s DOUBLE
);
CREATE TABLE IF NOT EXISTS model_calls (
    run_id VARCHAR, step INTEGER, start_s DOUBLE, end_s DOUBLE, client_queue_s DOUBLE,
    ttft_s DOUBLE, decode_s DOUBLE, prompt_tokens BIGINT, cached_tokens BIGINT,
    completion_tokens BIGINT, reasoning_tokens BIGINT, finish_reason VARCHAR,
    attempts INTEGER, estimated VARCHAR, reasoning_s DOUBLE, first_visible_s DOUBLE,
    purpose VARCHAR
);
CREATE TABLE IF NOT EXISTS tool_calls (
    run_id VARCHAR, step INTEGER, name VARCHAR, start_s DOUBLE, end_s DOUBLE,
    duration_s DOUBLE, ok BOOLEAN, exit_code INTEGER, output_chars BIGINT
);
"""


class ResultStore:
    """An open results database.

    Args:
        path: the DuckDB file (created with its tables if missing).
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = duckdb.connect(str(path))
        self.db.execute(_SCHEMA)
        self._add_missing_columns()

    def _add_missing_columns(self) -> None:
        """A store written by an older looplab gets the columns added since (NULL until
        its traces are indexed again)."""
        for table, columns in _ADDED_COLUMNS.items():
            present = {row[0] for row in self.db.execute(f"DESCRIBE {table}").fetchall()}
            for column, kind in columns.items():
                if column not in present:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def index(self, trace: Trace) -> None:
        """Insert (or replace) one trace's rows."""
        with _no_pandas_probe():
            self._index(trace)

    def _index(self, trace: Trace) -> None:
        run_id = trace.header.run_id
        for table in ("runs", "steps", "model_calls", "tool_calls"):
            self.db.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
        self.db.execute("INSERT INTO runs VALUES (" + ", ".join("?" * 26) + ")", _run_row(trace))
        steps = [
            [run_id, e.step, e.start, e.end, e.model_s, e.tool_s, e.overhead_s]
            + [e.phases.get(phase) for phase in ("act", "page_wait", "observe")]
            for e in trace.events
            if isinstance(e, StepEvent)
        ]
        calls = [_call_row(run_id, e) for e in trace.events if isinstance(e, ModelCallEvent)]
        tools = [
            [
                run_id,
                e.step,
                e.name,
                e.start,
                e.end,
                e.duration_s,
                e.ok,
                e.exit_code,
                e.output_chars,
            ]
            for e in trace.events
            if isinstance(e, ToolCallEvent)
        ]
        _insert(self.db, "steps", _STEP_COLUMNS, steps)
        _insert(self.db, "model_calls", _CALL_COLUMNS, calls)
        _insert(self.db, "tool_calls", _TOOL_COLUMNS, tools)

    def rebuild(self, trace_dir: Path) -> IndexReport:
        """Replace every row with the complete traces directly under `trace_dir`.

        Returns:
            What was indexed, and which traces were left out and why (incomplete, unreadable,
            or holding values a column cannot store).
        """
        report = IndexReport()
        for table in ("runs", "steps", "model_calls", "tool_calls"):
            self.db.execute(f"DELETE FROM {table}")
        for path in sorted(trace_dir.glob("*.jsonl")):
            if not path.is_file():
                continue
            try:
                trace = read_trace(path)
            except TraceError as exc:
                report.skipped[path.name] = str(exc)
                continue
            if not trace.complete:
                report.skipped[path.name] = "incomplete (no run_end)"
                continue
            try:
                self.db.execute("BEGIN TRANSACTION")
                self.index(trace)
                self.db.execute("COMMIT")
            except (duckdb.Error, OverflowError, ValueError) as exc:
                self.db.execute("ROLLBACK")
                report.skipped[path.name] = f"cannot be indexed: {exc}"
                continue
            report.indexed += 1
        return report

    @classmethod
    def rebuild_file(cls, path: Path, trace_dir: Path) -> IndexReport:
        """Build a fresh index of `trace_dir` beside `path` and rename it over `path`.

        Raises:
            OSError: the directory is not writable.
        """
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        _remove_stale_temporaries(path)
        _remove_database(temporary)
        try:
            with cls(temporary) as store:
                report = store.rebuild(trace_dir)
            with contextlib.suppress(FileNotFoundError):
                Path(f"{path}.wal").unlink()  # a crashed writer's log must not replay onto it
            os.replace(temporary, path)
        finally:
            _remove_database(temporary)
        return report

    def query(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """Run SQL and return all rows."""
        return self.db.execute(sql, params or []).fetchall()


@dataclass
class IndexReport:
    """What a rebuild indexed.

    Attributes:
        indexed: complete traces now in the index.
        skipped: file name -> why it is not (incomplete, unreadable, unstorable values).
    """

    indexed: int = 0
    skipped: dict[str, str] = field(default_factory=dict)


INSERT_ROWS = 500
"""Rows per INSERT statement: one statement of many rows, not `executemany` (which runs
the statement once per row, about ten times slower)."""


def _insert(
    db: duckdb.DuckDBPyConnection, table: str, columns: tuple[str, ...], rows: list[list[Any]]
) -> None:
    """`rows` into `table`'s `columns`, `INSERT_ROWS` rows per statement."""
    one = "(" + ", ".join("?" * len(columns)) + ")"
    for at in range(0, len(rows), INSERT_ROWS):
        chunk = rows[at : at + INSERT_ROWS]
        db.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES " + ", ".join([one] * len(chunk)),
            [value for row in chunk for value in row],
        )


@functools.cache
def _pandas_installed() -> bool:
    return importlib.util.find_spec("pandas") is not None


@contextlib.contextmanager
def _no_pandas_probe() -> Iterator[None]:
    """DuckDB tries `import pandas` for every Python value it binds (twice each, in 1.5);
    without pandas installed every try searches the whole `sys.path` again, most of an
    index's time. Within this block pandas is marked absent in `sys.modules`, so each try
    fails at once; the mark is taken away after (nothing changes when pandas is there)."""
    if "pandas" in sys.modules or _pandas_installed():
        yield
        return
    sys.modules["pandas"] = None  # type: ignore[assignment]  # None: "known absent"
    try:
        yield
    finally:
        if "pandas" in sys.modules and sys.modules["pandas"] is None:
            del sys.modules["pandas"]


def _remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary indexes (and their logs) of rebuilds whose process is gone
    (`.<name>.<pid>.tmp[.wal]`, left by a kill during the build)."""
    for leftover in path.parent.glob(f".{path.name}.*.tmp*"):
        pid = leftover.name[len(path.name) + 2 :].split(".", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def _remove_database(path: Path) -> None:
    for leftover in (path, Path(f"{path}.wal")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()


def _run_row(trace: Trace) -> list[Any]:
    header = trace.header
    cell = header.cell
    end = trace.end
    calls = trace.model_calls()
    start_event = trace.events[0] if trace.events else None
    sandbox_start = getattr(start_event, "sandbox_start_s", None)
    if sandbox_start is None and end is not None:
        sandbox_start = end.sandbox_start_s
    steps = trace.steps()
    model_s = sum(s.model_s for s in steps) if steps else None
    tool_s = sum(s.tool_s for s in steps) if steps else None
    overhead = sum(s.overhead_s for s in steps) if steps else None
    return [
        header.run_id,
        header.experiment,
        cell.backend,
        header.agent,
        header.task,
        cell.repetition,
        cell.seed,
        profile_name(header.profile),
        profile_rate(header.profile),
        header.clock,
        header.source,
        trace.complete,
        end.end_reason if end else None,
        end.success if end else None,
        end.steps if end else len(steps),
        end.end if end else None,
        model_s,
        tool_s,
        overhead,
        sandbox_start,
        _total(c.prompt_tokens for c in calls),
        _total(c.completion_tokens for c in calls),
        _total(c.reasoning_tokens for c in calls),
        end.loop_lag_p99_ms if isinstance(end, RunEndEvent) else None,
        header.created,
        str(trace.path) if trace.path else None,
    ]


_CALL_COLUMNS = (
    "run_id",
    "step",
    "start_s",
    "end_s",
    "client_queue_s",
    "ttft_s",
    "decode_s",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "finish_reason",
    "attempts",
    "estimated",
    "reasoning_s",
    "first_visible_s",
    "purpose",
)
"""`model_calls` columns in `_call_row` order (named, so older stores with columns added
at the end accept the same rows)."""


_STEP_COLUMNS = (
    "run_id",
    "step",
    "start_s",
    "end_s",
    "model_s",
    "tool_s",
    "overhead_s",
    "act_s",
    "page_wait_s",
    "observe_s",
)
"""`steps` columns in row order."""
_TOOL_COLUMNS = (
    "run_id",
    "step",
    "name",
    "start_s",
    "end_s",
    "duration_s",
    "ok",
    "exit_code",
    "output_chars",
)
"""`tool_calls` columns in row order."""

_ADDED_COLUMNS = {
    "model_calls": {"reasoning_s": "DOUBLE", "first_visible_s": "DOUBLE", "purpose": "VARCHAR"},
    "steps": {"act_s": "DOUBLE", "page_wait_s": "DOUBLE", "observe_s": "DOUBLE"},
}
"""Columns added since a store's first format, by table: an older store gets them."""


def _call_row(run_id: str, e: ModelCallEvent) -> list[Any]:
    return [
        run_id,
        e.step,
        e.start,
        e.end,
        None if e.sent is None else e.sent - e.start,
        e.ttft_s,
        e.decode_s,
        e.prompt_tokens,
        e.cached_tokens,
        e.completion_tokens,
        e.reasoning_tokens,
        e.finish_reason,
        len(e.attempts),
        ",".join(sorted(e.estimated)) or None,
        e.reasoning_s,
        e.first_visible_s,
        e.purpose,
    ]


def _total(values: Any) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None
