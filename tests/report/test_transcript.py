"""Transcripts: each step's message, tool calls with arguments and outputs beside the
step's timing; outputs cut to a bound with the rest folded; imported runs show what they
have."""

from __future__ import annotations

import asyncio
import json
from html import unescape
from pathlib import Path
from typing import NoReturn

import pytest

from looplab.analysis.divergence import LIVE_REPLAY_NOTE
from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.report.build import build_report
from looplab.report.data.records import record_from_trace
from looplab.report.render.transcript import PREVIEW_CHARS, transcript_html
from looplab.report.views.transcript import transcript
from looplab.traces.importers import import_runs, write_runs
from looplab.traces.io import read_trace


def test_transcript_shows_messages_tools_outputs_and_timing(known_pair: Path) -> None:
    """The known run: its run_tests output, arguments, exit code, and phase timings."""
    record = record_from_trace(read_trace(known_pair / "traces/known-a.jsonl"), "k")
    view = transcript(record)
    assert view is not None and view.has_content and len(view.steps) == 3
    step = view.steps[1]
    assert step.text == "step 2: calling run_tests"
    assert [t.name for t in step.tools] == ["run_tests"]
    assert step.tools[0].output == "KNOWN-OUTPUT-42: 3 passed" and step.tools[0].exit_code == 0
    assert step.row.parts["decode"] == 1.0 and step.row.parts["tools"] == 1.0
    html = unescape(transcript_html(view))
    assert "KNOWN-OUTPUT-42: 3 passed" in html and '"path": "src/run_tests.py"' in html
    assert "decode 1.00 s" in html and "exit 0" in html


def test_long_outputs_are_cut_and_folded(known_pair: Path) -> None:
    """An output over the bound is cut (and says so); past the preview it is folded."""
    record = record_from_trace(read_trace(known_pair / "traces/known-a.jsonl"), "k")
    assert record.trace is not None
    long = "x" * (PREVIEW_CHARS + 500)
    for event in record.trace.tool_calls():
        object.__setattr__(event, "output", long)
        object.__setattr__(event, "output_chars", 5000)
    view = transcript(record, output_chars=PREVIEW_CHARS + 100)
    assert view is not None and view.steps[0].tools[0].output == long[: PREVIEW_CHARS + 100]
    html = transcript_html(view)
    assert f"show all ({PREVIEW_CHARS + 100:,} chars)" in html
    assert f"cut: {PREVIEW_CHARS + 100:,} of 5,000 characters kept here." in html


def test_report_embeds_transcripts_of_the_shown_runs(known_pair: Path) -> None:
    """Both runs of the known pair have their transcript in the report's run sections."""
    html, model = build_report([known_pair])
    assert set(model.transcripts) == {"known-a", "known-b"}
    section = html[html.index('id="run-known-a"') :]
    assert "KNOWN-OUTPUT-42: 3 passed" in section[: section.index("</section>")]
    _, none = build_report([known_pair], transcripts=0)
    assert none.transcripts == {}


def test_imported_runs_without_content_say_what_they_lack(runs_root: Path) -> None:
    """An imported trace renders its steps and names what its source did not have."""
    html, model = build_report([runs_root / "imported"])
    view = next(iter(model.transcripts.values()))
    assert view.steps and view.absent
    assert 'class="transcript"' in html


def test_a_source_without_content_shows_timings_and_says_so(tmp_path: Path) -> None:
    """TraceLab rounds carry no text: the transcript lists tool names and timings and
    names what the source lacked."""
    source = Path(__file__).parents[1] / "fixtures/external-traces/tracelab/round_trace.jsonl"
    _, runs = import_runs("auto", source)
    write_runs(runs, tmp_path / "tracelab")
    html, model = build_report([tmp_path / "tracelab"])
    view = next(iter(model.transcripts.values()))
    assert not view.has_content and "tool_call.output" in view.absent
    assert "holds no message or tool output text" in html
    assert "(output not in the trace)" in html


def test_a_live_replay_marks_its_diverged_step(known_pair: Path) -> None:
    """The transcript of a live replay whose read_file failed highlights that step."""
    recorded = read_trace(known_pair / "traces/known-a.jsonl")
    replay = read_trace(known_pair / "traces/known-a.jsonl")
    replay.header = replay.header.model_copy(
        update={"run_id": "known-a.live", "notes": [f"{LIVE_REPLAY_NOTE}known-a"]}
    )
    replay.events = [
        e.model_copy(update={"ok": False, "error": "boom"})
        if getattr(e, "name", "") == "read_file"
        else e
        for e in replay.events
    ]
    view = transcript(record_from_trace(replay, "k"), recorded=record_from_trace(recorded, "k"))
    assert view is not None and view.replay_of == "known-a"
    assert [s.index for s in view.steps if s.diverged] == [0]
    html = transcript_html(view)
    assert 'class="tstep diverged"' in html and "Diverged from the recording" in html


@pytest.mark.browser
def test_web_transcript_shows_the_page_after_each_action(tmp_path: Path) -> None:
    """trace_screenshots: each page action's JPEG is in the trace and drawn in the
    transcript; snapshots keep none, and no image ever reaches the model."""
    config = {
        "name": "shots",
        "backends": [
            {
                "name": "fast",
                "profile": "fast-750",
                "overrides": {"ttft_s": 0, "decode_tps": 20000, "prefill_tps": None},
            }
        ],
        "tasks": ["web/signup-wizard"],
        "agent": {"trace_screenshots": True},
        "output_dir": str(tmp_path / "shots"),
    }
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=True)
    result = asyncio.run(runner.run())
    assert [o.status for o in result.outcomes] == ["done"]
    (path,) = (tmp_path / "shots/traces").glob("*.jsonl")
    trace = read_trace(path)
    tools = trace.tool_calls()
    actions = [t for t in tools if t.name in {"goto", "click", "type", "select", "press"}]
    assert actions and all(
        (t.screenshot or "").startswith("data:image/jpeg;base64,/9j/") for t in actions
    )
    assert all(t.screenshot is None for t in tools if t.name in {"snapshot", "finish"})
    assert "data:image" not in json.dumps([c.message for c in trace.model_calls()])
    html = transcript_html(transcript(record_from_trace(trace, "w")) or _missing())
    assert html.count('<img class="shot" src="data:image/jpeg') == len(actions)
    assert "the image under an action is the page after it" in html


def _missing() -> NoReturn:
    raise AssertionError("no transcript")
