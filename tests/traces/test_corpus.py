"""The shipped corpus: index and files agree, selection, compact traces keep every timing."""

from __future__ import annotations

import statistics
from pathlib import Path

from looplab.analysis.sweep import run_sweep
from looplab.latency.presets import resolve_profile
from looplab.traces.corpus import (
    CONTENT_LIMIT,
    compact_run,
    compress,
    corpus_dir,
    list_corpus,
    load_corpus,
    select,
)
from looplab.traces.importers import import_runs, write_runs
from looplab.traces.inputs import find_trace_files, load_traces
from looplab.traces.io import read_trace
from looplab.traces.schema import ModelCallEvent, ToolCallEvent


def test_index_matches_the_files_and_names_every_source() -> None:
    """Every indexed trace exists and nothing unindexed is shipped; sources and licences set."""
    root = corpus_dir()
    runs = list_corpus()
    assert {r.file for r in runs} == {str(p.relative_to(root)) for p in root.glob("*/*.jsonl.gz")}
    assert all("@" in r.source and ":" in r.source and r.licence for r in runs)
    counts = {h: len(select(runs, harness=h)) for h in {r.harness for r in runs}}
    assert counts == {
        "mini-swe-agent": 42,
        "swe-agent": 11,
        "openhands": 6,
        "inspect": 11,
        "claude-code": 1,
        "codex": 1,
    }
    assert sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) < 2_000_000


def test_the_corpus_root_is_an_input_of_every_trace_command(tmp_path: Path) -> None:
    """The corpus root (one folder per harness) gives every indexed trace, in name order;
    a folder of experiments gives their finished traces, never `traces/incomplete/`."""
    root = corpus_dir()
    found = find_trace_files(root)
    assert [str(p.relative_to(root)) for p in found] == sorted(r.file for r in list_corpus())
    for name in ("a", "b"):
        traces = tmp_path / name / "traces"
        (traces / "incomplete").mkdir(parents=True)
        (traces / f"{name}.jsonl").write_text("{}\n")
        (traces / "incomplete" / f"{name}.0.jsonl").write_text("{}\n")
    assert [p.name for p in find_trace_files(tmp_path)] == ["a.jsonl", "b.jsonl"]


def test_select_by_harness_and_model_and_load() -> None:
    """ "All mini-swe-agent DeepSeek runs": 42, all timed, each trace's header as indexed."""
    runs = select(list_corpus(), harness="mini-swe-agent", model="DeepSeek")
    assert len(runs) == 42 and all(r.timed for r in runs)
    traces = load_corpus(runs[:3])
    for run, trace in zip(runs[:3], traces, strict=True):
        assert trace.complete and trace.header.run_id == run.run_id
        assert trace.header.source_path == run.source
        assert trace.header.source == "import:mini-swe-agent"
    assert select(list_corpus(), harness="swe-agent", timed=True) == []


def test_corpus_trace_keeps_the_import_timings(fixtures: Path) -> None:
    """The corpus copy of sqlfluff-2419 has the fixture import's times and tokens, no content."""
    [imported] = import_runs(
        "auto", fixtures / "external-traces/mini-swe-agent/sqlfluff__sqlfluff-2419.traj.json"
    )[1]
    [entry] = [r for r in list_corpus() if r.run_id == imported.header.run_id]
    [shipped] = load_corpus([entry])
    timing = [(e.kind, e.start, e.end) for e in imported.events]
    assert [(e.kind, e.start, e.end) for e in shipped.events] == timing
    tokens = [(e.prompt_tokens, e.completion_tokens) for e in shipped.model_calls()]
    assert tokens == [
        (e.prompt_tokens, e.completion_tokens)
        for e in imported.events
        if isinstance(e, ModelCallEvent)
    ]
    assert all(t.output is None for t in shipped.tool_calls())
    sizes = [e.output_chars for e in imported.events if isinstance(e, ToolCallEvent)]
    assert [t.output_chars for t in shipped.tool_calls()] == sizes and any(sizes)
    assert all(m.message is None for m in shipped.model_calls())
    assert shipped.header.absent == imported.header.absent


def test_compact_run_keeps_short_strings(fixtures: Path, tmp_path: Path) -> None:
    """Commands up to CONTENT_LIMIT characters stay; longer arguments and outputs go."""
    [run] = import_runs("auto", fixtures / "corpus/openhands/wrong_initial_state.json")[1]
    small = compact_run(run, source="a/b@c:d", licence="MIT")
    tools = [e for e in small.events if isinstance(e, ToolCallEvent)]
    assert all(len(t.arguments) <= CONTENT_LIMIT and t.output is None for t in tools)
    assert any(t.arguments for t in tools)
    assert "licence: MIT" in small.header.notes and small.header.source_path == "a/b@c:d"
    [written] = write_runs([small], tmp_path)
    packed = compress(written)
    assert packed.name.endswith(".jsonl.gz") and not written.exists()
    assert read_trace(packed).events == small.events


def test_sweep_over_the_corpus_per_harness() -> None:
    """80 -> 750 tok/s: mini-swe-agent runs speed up ~3x, the Claude Code session less (its
    tools take a third of the time), both far below the 9.4x decode ratio."""

    def median_speedup(harness: str) -> float:
        traces = load_traces([corpus_dir() / harness])
        rows, _ = run_sweep(traces, [80, 750], [0.3], resolve_profile("slow-80"), reference=80)
        return statistics.median(r.speedup for r in rows if r.point.decode_tps == 750)

    mini, claude = median_speedup("mini-swe-agent"), median_speedup("claude-code")
    assert 2.5 < mini < 3.5 and 1.5 < claude < mini
