"""Mooncake-style export: well-formed rows, prefix reuse in hash ids, tool gaps in timestamps."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

from typer.testing import CliRunner

from looplab.cli.app import app
from looplab.traces.exporters.mooncake import mooncake_rows
from looplab.traces.importers import import_runs, write_runs
from looplab.traces.inputs import load_traces


def _traces(external: Path, tmp_path: Path) -> Path:
    _, runs = import_runs("openhands", external / "openhands" / "multi_swe_bench_output.jsonl")
    directory = tmp_path / "traces"
    write_runs(runs, directory)
    return directory


def test_export_is_well_formed_and_shows_reuse(external: Path, tmp_path: Path) -> None:
    """`looplab export mooncake`: every line has the four fields as integers, one hash id per
    512-token block, sorted timestamps; each session's calls reuse their predecessor's
    leading ids (the conversation grows), sessions share none; gaps are the trace's."""
    directory = _traces(external, tmp_path)
    out = tmp_path / "trace.jsonl"
    done = CliRunner().invoke(
        app, ["--no-log-file", "export", "mooncake", str(directory), "-o", str(out)]
    )
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(
        set(r) == {"timestamp", "input_length", "output_length", "hash_ids"} for r in rows
    )
    for row in rows:
        assert all(isinstance(row[k], int) for k in ("timestamp", "input_length", "output_length"))
        assert row["output_length"] >= 1
        assert len(row["hash_ids"]) == math.ceil(row["input_length"] / 512)
    stamps = [r["timestamp"] for r in rows]
    assert stamps == sorted(stamps) and stamps[0] == 0
    traces = load_traces([directory])
    for trace in traces:
        export = mooncake_rows([trace])
        calls = sorted((c for c in trace.model_calls() if c.prompt_tokens), key=lambda c: c.start)
        assert len(export.rows) == len(calls) > 3
        assert export.reused_blocks / export.blocks > 0.8
        # the gap between two requests is the trace's: model call + tools + harness
        origin = calls[0].start
        assert [r["timestamp"] for r in export.rows] == [
            round((c.start - origin) * 1000) for c in calls
        ]
        for before, after, call in zip(export.rows, export.rows[1:], calls[1:], strict=False):
            if call.prompt_tokens and call.prompt_tokens >= before["input_length"]:
                full = before["input_length"] // 512
                assert after["hash_ids"][:full] == before["hash_ids"][:full]
    apart = mooncake_rows(traces, stagger_s=100_000)  # sessions one after another
    sizes = [len(mooncake_rows([t]).rows) for t in traces]
    bounds = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
    ids = [
        {i for r in apart.rows[a:b] for i in r["hash_ids"]} for a, b in itertools.pairwise(bounds)
    ]
    assert len(ids) == 3 and all(not (x & y) for x in ids for y in ids if x is not y)


def test_export_from_a_workload_model(tmp_path: Path) -> None:
    """`--workload`: sessions drawn from a shipped model, timed at fast-750; each session's
    requests come later than the previous one's decode, prefixes reused; bad flags refused."""
    model = Path(__file__).resolve().parents[2] / "tasks" / "workload" / "mini-swe-agent-deepseek"
    out = tmp_path / "drawn.jsonl"
    args = ["--no-log-file", "export", "mooncake", "--workload", str(model / "workload.yaml")]
    done = CliRunner().invoke(app, [*args, "--tasks", "2", "-o", str(out)])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) > 10 and "2 session(s)" in done.output
    assert sum(1 for r in rows if r["timestamp"] == 0) == 2
    later = [r for r in rows if r["timestamp"] > 0]
    assert all(r["hash_ids"][0] in {rows[0]["hash_ids"][0], rows[1]["hash_ids"][0]} for r in later)
    both = CliRunner().invoke(app, [*args, str(out), "-o", str(out)])
    assert both.exit_code != 0 and "not both" in f"{both.output}{both.exception}"


def test_sessions_are_closed_loop_turns(external: Path, tmp_path: Path) -> None:
    """`export mooncake --sessions`: one session per trace; the first turn is the whole
    prompt at the session's start, each later turn what it adds to the conversation after
    `delay` ms (the trace's gap from the previous call's end), so the turns rebuild every
    prompt that grew by appending."""
    directory = _traces(external, tmp_path)
    out = tmp_path / "sessions.jsonl"
    done = CliRunner().invoke(
        app,
        ["--no-log-file", "export", "mooncake", str(directory), "--sessions", "-o", str(out)],
    )
    assert done.exit_code == 0, done.output
    assert "compacted prompts" in done.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    traces = load_traces([directory])
    assert len({r["session_id"] for r in rows}) == len(traces) > 1
    for trace in traces:
        turns = [r for r in rows if r["session_id"] == trace.header.run_id]
        calls = sorted((c for c in trace.model_calls() if c.prompt_tokens), key=lambda c: c.start)
        assert len(turns) == len(calls) > 3
        assert set(turns[0]) == {"session_id", "timestamp", "input_length", "output_length"}
        assert turns[0]["input_length"] == calls[0].prompt_tokens
        context = 0
        for turn, before, call in zip(turns[1:], calls, calls[1:], strict=False):
            assert set(turn) == {"session_id", "delay", "input_length", "output_length"}
            assert turn["delay"] == max(0, round((call.start - before.end) * 1000))
            context = (before.prompt_tokens or 0) + (before.completion_tokens or 0)
            if call.prompt_tokens and call.prompt_tokens > context:
                assert context + turn["input_length"] == call.prompt_tokens
        assert any(t["delay"] > 0 for t in turns[1:])
