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
