"""`looplab bench report` (looplab.bench.run_commands): real reports written and timed."""

from __future__ import annotations

import os

import pytest

from looplab.cli.main import main


def test_bench_report_times_many_runs_and_a_deep_chain(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five synthetic runs and a 30-deep chain of sub-runs: each report is written three
    times and its median, least time and size are printed."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("LOOPLAB_LOG_FILE", os.devnull)
    with pytest.raises(SystemExit) as ended:
        main(["bench", "report", "--runs", "5", "--chain", "30"])
    out = capsys.readouterr()
    assert ended.value.code == 0, out.err
    assert "report of 5 runs:" in out.out
    assert "report of one run, 30 nested sub-runs:" in out.out
    assert out.out.count("median of 3") == 2


def test_the_chain_is_a_valid_run_tree_of_the_asked_depth() -> None:
    """`chain_trace(40)`: 40 sub-runs, each the only child of the one before, each inside
    its parent's time, read back through the trace door's structure check."""
    from looplab.bench.subruns import chain_trace
    from looplab.traces.schema import SubRunEvent
    from looplab.traces.structure import structure_problem

    trace = chain_trace(40)
    subs = {e.subrun: e for e in trace.events if isinstance(e, SubRunEvent)}
    assert len(subs) == 40 and structure_problem(trace.events) is None
    for level in range(1, 40):
        child, parent = subs[f"s{level}"], subs[f"s{level - 1}"]
        assert child.parent == f"s{level - 1}"
        assert parent.start < child.start and child.end <= parent.end
