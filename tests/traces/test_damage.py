"""Damaged traces and the results index: clear errors, and an index that is exactly the
complete traces whatever happened before (failures, reruns, a reader holding it open)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from looplab.errors import TraceError
from looplab.report.render.svg import Chart
from looplab.traces.exporters.otel import export_otel
from looplab.traces.io import TraceWriter, read_trace
from looplab.traces.schema import RunEndEvent, RunStartEvent, StepEvent, TraceHeader
from looplab.traces.scrub import Scrubber
from looplab.traces.store import ResultStore

CREATED = datetime(2026, 12, 1, tzinfo=UTC)


def _write(path: Path, run_id: str, *, complete: bool, task: str = "t") -> Path:
    header = TraceHeader(run_id=run_id, created=CREATED, task=task, cell={"backend": "b"})
    with TraceWriter(path, header) as writer:
        writer.write(RunStartEvent(run_id=run_id, start=0.0, end=0.0, task=task))
        writer.write(
            StepEvent(run_id=run_id, step=0, start=0, end=1, model_s=0.5, tool_s=0.5, overhead_s=0)
        )
        if complete:
            writer.write(RunEndEvent(run_id=run_id, start=0, end=1, end_reason="finish", steps=1))
    return path


def test_torn_last_line_inside_a_utf8_character_is_incomplete(tmp_path: Path) -> None:
    """A run killed while writing a multi-byte character leaves an incomplete trace."""
    path = _write(tmp_path / "t.jsonl", "r1", complete=False)
    torn = json.dumps({"kind": "run_end", "error": "ça"}, ensure_ascii=False).encode()
    path.write_bytes(path.read_bytes() + torn[: torn.index(b"\xc3") + 1])
    trace = read_trace(path)
    assert not trace.complete and len(trace.events) == 2


def test_bad_bytes_before_the_last_line_are_named_with_their_offset(tmp_path: Path) -> None:
    """Non-UTF-8 in the middle of a trace: TraceError with the line and byte offset."""
    path = _write(tmp_path / "t.jsonl", "r1", complete=True)
    lines = path.read_bytes().split(b"\n")
    lines.insert(1, b"\xff\xfe")
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(
        TraceError, match=rf"line 2: not UTF-8 \(byte 0xff at offset {len(lines[0]) + 1}\)"
    ):
        read_trace(path)


def test_fifo_named_like_a_trace_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO is never opened (reading it would hang)."""
    os.mkfifo(tmp_path / "run.jsonl")
    with pytest.raises(TraceError, match="not a regular file"):
        read_trace(tmp_path / "run.jsonl")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e300"])
def test_non_finite_and_absurd_times_are_refused(tmp_path: Path, value: str) -> None:
    """NaN, infinities and times beyond MAX_SECONDS are damage: a TraceError at read."""
    path = _write(tmp_path / "t.jsonl", "r1", complete=True)
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace('"end":1.0', f'"end":{value}')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError, match=r"line 3: bad event \(step\.end"):
        read_trace(path)


def test_index_is_exactly_the_complete_traces_after_failures_and_reruns(tmp_path: Path) -> None:
    """Fail, fail, succeed: one row for the cell; set-aside traces are never rows."""
    traces = tmp_path / "traces"
    database = tmp_path / "results.duckdb"
    _write(traces / "a.jsonl", "a.1", complete=True, task="a")
    for attempt in range(3):  # the runner sets a cut-off trace aside before rerunning
        _write(traces / "b.jsonl", f"b.{attempt}", complete=False, task="b")
        report = ResultStore.rebuild_file(database, traces)
        assert (report.indexed, report.skipped) == (1, {"b.jsonl": "incomplete (no run_end)"})
        (traces / "incomplete").mkdir(exist_ok=True)
        (traces / "b.jsonl").rename(traces / "incomplete" / f"b.{attempt}.jsonl")
    _write(traces / "b.jsonl", "b.3", complete=True, task="b")
    ResultStore.rebuild_file(database, traces)
    with ResultStore(database) as store:
        assert sorted(store.query("SELECT run_id FROM runs")) == [("a.1",), ("b.3",)]
        assert store.query("SELECT count(*) FROM steps")[0][0] == 2


def test_unstorable_values_skip_one_trace_not_the_index(tmp_path: Path) -> None:
    """A trace whose numbers a column cannot hold is reported, the others indexed."""
    traces = tmp_path / "traces"
    _write(traces / "ok.jsonl", "ok", complete=True)
    header = TraceHeader(run_id="huge", created=CREATED, cell={"seed": 2**70})
    with TraceWriter(traces / "huge.jsonl", header) as writer:
        writer.write(RunEndEvent(run_id="huge", start=0, end=1, end_reason="finish", steps=1))
    report = ResultStore.rebuild_file(tmp_path / "r.duckdb", traces)
    assert report.indexed == 1
    assert "cannot be indexed" in report.skipped["huge.jsonl"]


_HOLD = """
import sys, time, duckdb
db = duckdb.connect(sys.argv[1])  # read-write: DuckDB locks the file, like its CLI
print(db.execute("SELECT count(*) FROM runs").fetchone()[0], flush=True)
time.sleep(30)
"""


def test_a_reader_holding_the_index_open_cannot_fail_the_rebuild(tmp_path: Path) -> None:
    """The rebuild writes beside the file and renames it over: the lock holder keeps its
    old view, the run goes on, and the next reader sees the new index."""
    traces = tmp_path / "traces"
    database = tmp_path / "results.duckdb"
    _write(traces / "a.jsonl", "a", complete=True)
    ResultStore.rebuild_file(database, traces)
    reader = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(database)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "1"
        _write(traces / "b.jsonl", "b", complete=True)
        started = time.perf_counter()
        assert ResultStore.rebuild_file(database, traces).indexed == 2
        assert time.perf_counter() - started < 10
    finally:
        reader.kill()
        reader.communicate()
    with ResultStore(database) as store:
        assert store.query("SELECT count(*) FROM runs")[0][0] == 2


def test_url_credentials_are_scrubbed() -> None:
    """`scheme://user:password@host` keeps the host, loses the credentials."""
    scrub = Scrubber(environ={})
    assert scrub.text("base http://bob:s3cret@api.example/v1 ok") == (
        "base http://[REDACTED]@api.example/v1 ok"
    )
    assert scrub.text("https://t0ken@github.com/x and http://h/p?q=a@b") == (
        "https://[REDACTED]@github.com/x and http://h/p?q=a@b"
    )


def test_svg_draws_nan_and_infinity_as_gaps() -> None:
    """NaN/inf points break a line instead of failing (`math domain error` before)."""
    chart = Chart("c", "t", "x", "y")
    chart.set_scales((0, math.nan), (math.inf, 1))
    chart.axes()
    chart.line([(0, 1), (math.nan, 2), (1, 3), (2, 4)], "#000", "tip")
    chart.dots([(math.inf, 1)], "#000", ["t"])
    html = chart.render()
    assert html.count("<polyline") == 2  # the line breaks at the NaN point
    assert "nan" not in html.lower().replace("nanos", "")


def test_otel_export_is_strict_json_for_every_readable_trace(tmp_path: Path) -> None:
    """No NaN or infinity can reach OTLP attributes (they are not JSON)."""
    trace = read_trace(_write(tmp_path / "t.jsonl", "r1", complete=True))
    json.dumps(export_otel(trace), allow_nan=False)
