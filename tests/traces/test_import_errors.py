"""Unknown or corrupt input gives a TraceError naming the record; `auto` detection."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from looplab.errors import ConfigError, TraceError
from looplab.traces.importers import REGISTRY, detect_format, import_runs
from looplab.traces.importers.inspect import import_inspect
from looplab.traces.importers.mini_swe_agent import import_mini_swe_agent
from looplab.traces.importers.openhands import import_openhands
from looplab.traces.importers.tracelab import import_tracelab


def test_auto_detects_every_fixture(external: Path) -> None:
    """`auto` names each fixture's format from its content."""
    assert detect_format(external / "mini-swe-agent" / "sqlfluff__sqlfluff-2419.traj.json") == (
        "mini-swe-agent"
    )
    assert detect_format(external / "openhands" / "multi_swe_bench_output.jsonl") == "openhands"
    assert detect_format(external / "inspect" / "browser.json") == "inspect"
    assert detect_format(external / "tracelab" / "round_trace.jsonl") == "tracelab"


def test_auto_detects_eval_zip_and_event_list(tmp_path: Path) -> None:
    """A zip with header.json is Inspect; a JSON list of events is OpenHands."""
    path = tmp_path / "x.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", "{}")
    assert detect_format(path) == "inspect"
    events = tmp_path / "t.json"
    events.write_text(
        json.dumps([{"id": 0, "timestamp": "2025-01-01T00:00:00", "action": "message"}])
    )
    assert detect_format(events) == "openhands"


def test_unknown_json_and_lines_are_refused(tmp_path: Path) -> None:
    """JSON or JSON lines of no known shape, and our own traces, give clear errors."""
    odd = tmp_path / "odd.json"
    odd.write_text('{"hello": 1}')
    with pytest.raises(TraceError, match="no known format"):
        detect_format(odd)
    lines = tmp_path / "odd.jsonl"
    lines.write_text('{"a": 1}\n{"a": 2}\n')
    with pytest.raises(TraceError, match="line 1: JSON lines of no known format"):
        detect_format(lines)
    ours = tmp_path / "ours.jsonl"
    ours.write_text('{"trace_format": "looplab-1"}\n')
    with pytest.raises(TraceError, match="already a trace"):
        detect_format(ours)
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(TraceError, match="line 1: neither JSON"):
        detect_format(text)


def test_unknown_format_name_lists_allowed(tmp_path: Path) -> None:
    """A bad FORMAT is a ConfigError listing auto and every format with what it expects."""
    with pytest.raises(ConfigError) as caught:
        import_runs("no-such-harness", tmp_path / "x.json")
    message = str(caught.value)
    assert "allowed: auto, " in message
    for name, importer in REGISTRY.items():
        assert f"{name}: {importer.expects}" in message


def test_mini_corrupt_json_names_line(tmp_path: Path) -> None:
    """Truncated JSON: the error gives line and column."""
    path = tmp_path / "x.traj.json"
    path.write_text('{"messages": [\n{"role": "user"')
    with pytest.raises(TraceError, match=r"line 2 column \d+: not valid JSON"):
        import_mini_swe_agent(path)


def test_mini_bad_message_names_index(tmp_path: Path) -> None:
    """A message without a role is named messages[i]."""
    path = tmp_path / "x.traj.json"
    path.write_text(
        json.dumps(
            {
                "trajectory_format": "mini-swe-agent-1.1",
                "info": {},
                "messages": [{"role": "user", "content": "a"}, "oops"],
            }
        )
    )
    with pytest.raises(TraceError, match=r"messages\[1\]: not a chat message"):
        import_mini_swe_agent(path)


def test_openhands_bad_line_and_event_named(tmp_path: Path, external: Path) -> None:
    """A torn JSONL line is named by number; a bad history entry by line and index."""
    source = (external / "openhands" / "multi_swe_bench_output.jsonl").read_text().splitlines()
    torn = tmp_path / "torn.jsonl"
    torn.write_text(source[0] + "\n" + source[1][:500] + "\n")
    with pytest.raises(TraceError, match="line 2: not valid JSON"):
        import_openhands(torn)
    record = json.loads(source[0])
    record["history"][3] = 42
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(record) + "\n" + source[1] + "\n")
    with pytest.raises(TraceError, match=r"line 1: history\[3\]: not an event object"):
        import_openhands(bad)


def test_openhands_v1_sdk_events_refused_clearly(tmp_path: Path) -> None:
    """OpenHands V1 SDK events (kind-tagged) are named as unsupported, not misread."""
    path = tmp_path / "v1.json"
    path.write_text(
        json.dumps({"instance_id": "x", "history": [{"kind": "ActionEvent", "id": "a"}]})
    )
    with pytest.raises(TraceError, match=r"history\[0\]: an OpenHands V1 SDK event"):
        import_openhands(path)


def test_inspect_bad_event_named(tmp_path: Path, external: Path) -> None:
    """An event without its `event` kind is named samples[i].events[j]."""
    log = json.loads((external / "inspect" / "browser.json").read_text())
    del log["samples"][0]["events"][12]["event"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(log))
    with pytest.raises(TraceError, match=r"samples\[0\]\.events\[12\]: not an event"):
        import_inspect(path)


def test_inspect_corrupt_zip(tmp_path: Path, external: Path) -> None:
    """A zip without Inspect's header, and a damaged sample, are refused."""
    path = tmp_path / "x.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("other.json", "{}")
    with pytest.raises(TraceError, match=r"neither header\.json"):
        import_inspect(path)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "eval": {}}))
        archive.writestr("samples/1_epoch_1.json", "{not json")
    with pytest.raises(TraceError, match=r"samples/1_epoch_1.json: not valid JSON"):
        import_inspect(path)


def test_tracelab_bad_round_named(tmp_path: Path, external: Path) -> None:
    """A line that is not a round names its number and the missing fields."""
    path = tmp_path / "r.jsonl"
    shutil.copy(external / "tracelab" / "round_trace.jsonl", path)
    with path.open("a") as handle:
        handle.write('{"session_id": "s"}\n')
    with pytest.raises(
        TraceError, match=r"line 20: not a TraceLab round \(missing round_index, timing_events\)"
    ):
        import_tracelab(path)
