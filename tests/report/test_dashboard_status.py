"""The dashboard's running/finished status: a finished trace is finished whatever the length
of its last line, the status is recomputed on every look, and runs in progress render."""

from __future__ import annotations

import json
import shutil
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import pytest

from looplab.report.dashboard import experiments as dashboard
from looplab.report.dashboard.experiments import Reports, last_line
from looplab.report.dashboard.server import DashboardServer


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        body = exc.read().decode(errors="replace")
        exc.close()
        return exc.code, body


def _lengthen_run_end(trace: Path, chars: int) -> None:
    """Give the trace's run_end a check_output of `chars` characters (still a valid event)."""
    lines = trace.read_text().splitlines()
    end = json.loads(lines[-1])
    end["check_output"] = "x" * chars
    lines[-1] = json.dumps(end)
    trace.write_text("\n".join(lines) + "\n")


def _cut_run_end(trace: Path) -> None:
    """Drop the trace's run_end: the run is in progress."""
    lines = trace.read_text().splitlines()
    trace.write_text("\n".join(lines[:-1]) + "\n")


def test_last_line_reads_a_line_longer_than_one_chunk(tmp_path: Path) -> None:
    """The last line is returned whole, across several backward reads, trailing newlines ignored."""
    file = tmp_path / "t.jsonl"
    long = b'{"kind": "run_end", "x": "' + b"y" * 20_000 + b'"}'
    file.write_bytes(b'{"header": 1}\n' + long + b"\n\n")
    assert last_line(file, chunk=1000) == long
    (tmp_path / "one.jsonl").write_bytes(b"only")
    assert last_line(tmp_path / "one.jsonl", chunk=3) == b"only"


def test_finished_trace_with_a_long_run_end_is_finished(known_pair: Path, tmp_path: Path) -> None:
    """A run_end line of 10 KB (longer than any fixed tail) counts as finished: not running."""
    root = tmp_path / "root"
    shutil.copytree(known_pair, root / "known")
    for trace in (root / "known/traces").glob("*.jsonl"):
        _lengthen_run_end(trace, 10_000)
    experiment = Reports(root).experiment(root / "known")
    assert experiment.error is None and experiment.unfinished == 0
    assert experiment.running is False and len(experiment.records) == 2


def test_running_status_is_recomputed_not_cached(
    known_pair: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unfinished trace that stops changing stops counting as running, on the same cache."""
    root = tmp_path / "root"
    shutil.copytree(known_pair, root / "known")
    _cut_run_end(root / "known/traces/known-b.jsonl")
    monkeypatch.setattr(dashboard, "RUNNING_WINDOW_S", 60.0)  # loading takes seconds when busy
    reports = Reports(root)
    first = reports.experiment(root / "known")
    assert first.unfinished == 1 and first.running is True
    monkeypatch.setattr(dashboard, "RUNNING_WINDOW_S", 0.05)  # the trace has stopped changing
    time.sleep(0.1)
    again = reports.experiment(root / "known")
    assert again is first  # the cached experiment (its traces did not change) ...
    assert again.running is False  # ... whose status is looked at again
    assert reports.state(root / "known")["running"] is False


def test_runs_in_progress_render_without_a_500(known_pair: Path, tmp_path: Path) -> None:
    """A trace without run_end: its run page says in progress, its experiment's report and
    index render, a diff with it is refused with a sentence; an all-running experiment too."""
    root = tmp_path / "root"
    shutil.copytree(known_pair, root / "known")
    shutil.copytree(known_pair, root / "fresh")
    _cut_run_end(root / "known/traces/known-b.jsonl")
    for trace in (root / "fresh/traces").glob("*.jsonl"):
        _cut_run_end(trace)
    with DashboardServer(root) as server:
        status, run = _get(server.url + "run/known/traces/known-b.jsonl")
        assert status == 200 and "in progress" in run and 'id="live"' in run
        assert "path=known" in run and "4 step(s)" in run
        status, report = _get(server.url + "report/known")
        assert status == 200 and 'data-chart="compounding"' in report
        query = urlencode({"a": "known/traces/known-a.jsonl", "b": "known/traces/known-b.jsonl"})
        status, diff = _get(server.url + "diff?" + query)
        assert status == 422 and "still in progress" in diff
        status, waiting = _get(server.url + "report/fresh")
        assert status == 200 and "none ended yet" in waiting
        status, index = _get(server.url)
        assert status == 200 and index.count('class="badge">running') == 2
        assert "2 run(s) started, none ended yet" in index
