"""Sub-run structure checked at the door: a broken run tree is refused, never re-timed."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from looplab.bench.subruns import chain_trace
from looplab.cli.app import app
from looplab.errors import TraceError
from looplab.traces.inputs import read_traces
from looplab.traces.io import Trace, read_trace
from looplab.traces.schema import SubRunEvent
from tests.analysis.subrun_traces import fan, write

BROKEN: dict[str, tuple[dict[str, dict[str, object]], str]] = {
    "missing parent": ({"s0": {"parent": "ghost"}}, "parent 'ghost' is not declared"),
    "self parent": ({"s0": {"parent": "s0"}}, "its parent is itself"),
    "cycle": (
        {"s0": {"parent": "s1"}, "s1": {"parent": "s0"}},
        "a cycle of parents: 's0' -> 's1' -> 's0'",
    ),
    "join before spawn": (
        {"s0": {"parent_step": 1, "join_step": 0}},
        "join_step 0 comes before its spawning parent_step 1",
    ),
    "join out of range": (
        {"s1": {"join_step": 7}},
        "join_step 7 is outside the top-level run's steps (allowed: 0-1)",
    ),
    "negative spawn step": (
        {"s1": {"parent_step": -1}},
        "parent_step -1 is outside the top-level run's steps",
    ),
}


def _broken(changes: dict[str, dict[str, object]]) -> Trace:
    """A two-sub-run fan with its `subrun` events changed as given."""
    trace = fan(2)
    trace.events = [
        e.model_copy(update=changes.get(e.subrun or "", {})) if isinstance(e, SubRunEvent) else e
        for e in trace.events
    ]
    return trace


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_tree_is_refused_with_its_reason(case: str, tmp_path: Path) -> None:
    """read_trace names the file and what is wrong with its tree."""
    changes, reason = BROKEN[case]
    path = write(_broken(changes), tmp_path / "broken.jsonl")
    with pytest.raises(TraceError) as caught:
        read_trace(path)
    assert str(path) in str(caught.value) and reason in str(caught.value)


def test_broken_trace_in_a_directory_is_set_aside(tmp_path: Path) -> None:
    """In a directory the broken trace is set aside (named on stderr), the good one read;
    `sweep` of the broken file alone fails with the reason instead of a re-timed figure."""
    write(fan(2), tmp_path / "good.jsonl")
    bad = write(_broken(BROKEN["cycle"][0]), tmp_path / "bad.jsonl")
    traces = read_traces(tmp_path)
    assert [t.path for t in traces] == [tmp_path / "good.jsonl"]
    swept = CliRunner().invoke(app, ["--no-log-file", "sweep", str(bad), "--rates", "80,750"])
    assert swept.exit_code != 0
    assert "a cycle of parents" in swept.output + str(swept.exception)


def test_sound_trees_read() -> None:
    """A fan, a deep chain and an in-progress run (join not reached yet) all read."""
    for trace in (fan(3), chain_trace(50)):
        assert _roundtrip(trace).events
    running = fan(2)
    running.events = [e for e in running.events if e.kind != "run_end" and e.step != 1]
    assert _roundtrip(running).events


def _roundtrip(trace: Trace) -> Trace:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return read_trace(write(trace, Path(folder) / "t.jsonl"))
