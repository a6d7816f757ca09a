"""An experiment directory's layout is spelled in one place (`looplab.layout`)."""

from __future__ import annotations

import re
from pathlib import Path

from looplab.layout import ExperimentDir

PACKAGE = Path(__file__).resolve().parents[1] / "looplab"

LAYOUT_STRINGS = re.compile(
    r'"config\.json"|"results\.duckdb"|"report\.html"|"\.lock"'
    r'|/ "traces"|/ "incomplete"|"traces"\)|\{cell\.id\}\.jsonl'
)
"""How a module would spell the layout itself: a file name literal or a path join."""


def test_no_layout_string_outside_the_directory_object() -> None:
    """No module but `looplab/layout.py` spells an experiment directory's file names."""
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "layout.py" or path.parent != PACKAGE
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if LAYOUT_STRINGS.search(line)
    ]
    assert offenders == []


def test_the_directory_object_names_every_part(tmp_path: Path) -> None:
    """Config, traces, cut-off traces, store, report and lock live where the docs say."""
    layout = ExperimentDir(tmp_path)
    assert layout.config == tmp_path / "config.json"
    assert layout.trace("a__b") == tmp_path / "traces" / "a__b.jsonl"
    assert layout.incomplete == tmp_path / "traces" / "incomplete"
    assert (layout.store.name, layout.report.name, layout.lock.name) == (
        "results.duckdb",
        "report.html",
        ".lock",
    )
    assert layout.trace_files() == []
    layout.traces.mkdir()
    layout.trace("x").write_text("{}\n")
    (layout.traces / "notes.txt").write_text("not a trace")
    assert layout.trace_files() == [layout.trace("x")]
