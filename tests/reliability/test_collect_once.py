"""`looplab collect` writes every accepted run exactly once (issue 36, finding 5): a re-sent
export is idempotent, a SIGKILL before the settle time loses nothing, a kill's temporary
files are cleaned, and an end by signal never claims a run it lost.

Every test drives a real `looplab collect` subprocess over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from looplab.traces.io import read_trace

from .collect_cli import Collect, export, reap, run_of, span, wait_for

pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")


@pytest.fixture(autouse=True)
def _reaped() -> Iterator[None]:
    """No collector outlives its test."""
    yield
    reap()


def _count(campaign: Any, expected: int, written: int) -> None:
    """Record one exactly-once case: runs lost or duplicated against `expected`."""
    campaign.add("collect cases")
    campaign.add("collect lost", max(0, expected - written))
    campaign.add("collect duplicated", max(0, written - expected))
    if written != expected:
        campaign.add("collect failures")


def test_a_resent_export_after_its_run_was_written_is_idempotent(
    tmp_path: Path, campaign: Any
) -> None:
    """The same export sent again after its run was written (an exporter's retry), and
    again after a restart, still leaves one file; a new span of it makes part 2."""
    out = tmp_path / "out"
    collect = Collect(out, "--settle-s", "0.2")
    body = run_of("e1" * 16, calls=3)
    assert collect.post(body).status_code == 200
    assert wait_for(lambda: len(list(out.glob("*.jsonl"))) == 1)
    assert collect.post(body).status_code == 200
    code, errors = collect.stop()
    assert code == 130 and "1 run(s)" in errors and "4 already taken" in errors, errors
    _count(campaign, 1, len(list(out.glob("*.jsonl"))))
    assert len(list(out.glob("*.jsonl"))) == 1
    again = Collect(out, "--settle-s", "0.2")
    assert again.post(body).status_code == 200
    assert again.post(export(span("e1" * 16, 40))).status_code == 200
    code, errors = again.stop()
    files = sorted(out.glob("*.jsonl"))
    _count(campaign, 2, len(files))
    assert code == 130 and len(files) == 2, errors
    parts = sorted(len(read_trace(p).model_calls()) for p in files)
    assert parts == [1, 3]


def test_sigkill_before_the_settle_time_loses_nothing(tmp_path: Path, campaign: Any) -> None:
    """Five runs answered 200, SIGKILL before their settle time: the next start writes all
    five, each once, with their tokens."""
    out = tmp_path / "out"
    collect = Collect(out, "--settle-s", "60")
    for n in range(5):
        assert collect.post(run_of(f"{n + 1:032x}", calls=2)).status_code == 200
    collect.kill()
    campaign.add("kills")
    assert not list(out.glob("*.jsonl"))
    restarted = Collect(out, "--settle-s", "0.1", "--until-idle", "0.5")
    code = restarted.process.wait(timeout=120)
    _, errors = restarted.process.communicate()
    files = sorted(out.glob("*.jsonl"))
    _count(campaign, 5, len(files))
    assert code == 0 and len(files) == 5, errors
    tokens = sorted(c.prompt_tokens or 0 for p in files for c in read_trace(p).model_calls())
    assert tokens == [10] * 5 + [11] * 5


def test_a_kill_mid_write_leaves_nothing_after_a_restart(tmp_path: Path) -> None:
    """Temporary files of a write cut off by a kill are removed at the next start (named)."""
    out = tmp_path / "out"
    out.mkdir()
    stale = out / ".agent-e2e2e2e2.1a2b3c4d.jsonl.x81f_q.tmp"
    stale.write_text('{"half": ')
    collect = Collect(out, "--until-idle", "0.3")
    code = collect.process.wait(timeout=60)
    _, errors = collect.process.communicate()
    assert code == 0 and not stale.exists() and stale.name in errors


def test_sigterm_with_a_run_not_written_is_not_reported_as_success(tmp_path: Path) -> None:
    """SIGTERM with two runs buffered, one of whose times span a century (no trace can
    hold it): the good run is written, the other is named as not written, and the totals
    line says so; a clean end with such a run exits 1."""
    out = tmp_path / "out"
    collect = Collect(out, "--settle-s", "60")
    assert collect.post(run_of("f1" * 16)).status_code == 200
    far = span("f2" * 16, 9)
    far["startTimeUnixNano"] = far["endTimeUnixNano"] = str(4_000_000_000 * 10**9)
    assert collect.post(run_of("f2" * 16, calls=1)).status_code == 200
    assert collect.post(export(far)).status_code == 200
    code, errors = collect.stop(signal.SIGTERM)
    assert code in (130, 143), errors
    assert "trace " + "f2" * 16 + " not written" in errors and "1 run(s) not written" in errors
    assert len(list(out.glob("*.jsonl"))) == 1
    idle = Collect(tmp_path / "out2", "--settle-s", "0.1", "--until-idle", "3")
    both = run_of("f3" * 16, calls=1)
    both["resourceSpans"][0]["scopeSpans"][0]["spans"].append({**far, "traceId": "f3" * 16})
    assert idle.post(both).status_code == 200
    assert idle.process.wait(timeout=60) == 1


def test_a_signal_between_a_write_and_its_mark_leaves_nothing_to_take_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after a run's file is written but before the journal marks it (a busy
    machine widens that gap): the run stays queued, collect's end only marks it (not built
    and written twice), so the next start takes nothing back."""
    from looplab.traces.collect import commands
    from looplab.traces.collect.journal import Journal
    from looplab.traces.collect.receiver import Collector
    from looplab.traces.collect.spans import decode_request

    collector = Collector(settle_s=0.0, journal=Journal(tmp_path))
    body = json.dumps(run_of("e3" * 16, calls=2)).encode()
    collector.add(decode_request(body, "application/json").spans)
    marks: list[str] = []
    real_mark = commands._mark

    def cut_before_the_first_mark(*args: Any) -> None:
        if not marks:
            marks.append("cut")
            raise KeyboardInterrupt
        real_mark(*args)

    monkeypatch.setattr(commands, "_mark", cut_before_the_first_mark)
    builds: list[str] = []
    real_build = commands.build_run

    def counted_build(*args: Any) -> Any:
        builds.append("built")
        return real_build(*args)

    monkeypatch.setattr(commands, "build_run", counted_build)
    tally = commands._Tally()
    with pytest.raises(KeyboardInterrupt):
        commands._write(collector.drain(), tmp_path, collector, tally)
    assert len(list(tmp_path.glob("*.jsonl"))) == 1 and len(tally.queue) == 1
    commands._finish(collector, tmp_path, tally)
    assert tally.written == 1 and not tally.queue and not tally.unmarked
    assert builds == ["built"]  # marked at the end, not built and written a second time
    assert len(list(tmp_path.glob("*.jsonl"))) == 1
    assert [state.pending for state in Journal(tmp_path).recover().values()] == [[]]
