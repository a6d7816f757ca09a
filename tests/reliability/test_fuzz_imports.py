"""Property: `import auto` on mutated real files gives a clear error or traces, nothing else.

Seeds are the real files of tests/fixtures (cut to a few records so each example is fast).
A mutation truncates the bytes, splices in bytes that are not UTF-8, or replaces / deletes
one node of the parsed JSON with a value of the wrong type (an object where a string is
expected, NaN, infinity, 10**400, a huge or negative integer, a deep list). The importer
must either succeed, and then its traces must write and read back, or raise a TraceError /
ConfigError naming the file: never another exception, never a hang.
"""

from __future__ import annotations

import io
import json
import math
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from looplab.errors import ConfigError, TraceError
from looplab.traces.importers import import_runs, write_runs
from looplab.traces.io import read_trace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _json_seed(relative: str, keep: int | None = None) -> tuple[str, Any]:
    data = json.loads((FIXTURES / relative).read_text(encoding="utf-8"))
    if keep is not None and isinstance(data, dict) and isinstance(data.get("messages"), list):
        data["messages"] = data["messages"][:keep]
    if keep is not None and isinstance(data, list):
        data = data[:keep]
    return "json", data


def _lines_seed(relative: str, keep: int) -> tuple[str, Any]:
    lines = (FIXTURES / relative).read_text(encoding="utf-8").splitlines()[:keep]
    return "lines", [json.loads(line) for line in lines]


def _records_seed(relative: str, keep: int) -> tuple[str, Any]:
    """TraceLab's readable rendering, re-emitted as JSON lines (the raw log form)."""
    text = (FIXTURES / relative).read_text(encoding="utf-8")
    blocks = text.split("=====\n")[1:]
    records = [json.loads(b.split("\n=====")[0]) for b in blocks][:keep]
    return "lines", records


def _zip_seed(relative: str) -> tuple[str, Any]:
    with zipfile.ZipFile(FIXTURES / relative) as archive:
        members = {n: json.loads(archive.read(n)) for n in archive.namelist()}
    return "zip", members


SEEDS: dict[str, tuple[str, Any]] = {
    "mini.traj.json": _json_seed(
        "external-traces/mini-swe-agent/sqlfluff__sqlfluff-2419.traj.json", 8
    ),
    "openhands.jsonl": _lines_seed("external-traces/openhands/multi_swe_bench_output.jsonl", 1),
    "openhands-events.json": _json_seed("corpus/openhands/wrong_initial_state.json"),
    "inspect.json": _json_seed("corpus/inspect/log_images_tc.json"),
    "inspect.eval": _zip_seed("corpus/inspect/log_message_deduplication.eval"),
    "tracelab.jsonl": _lines_seed("external-traces/tracelab/round_trace.jsonl", 6),
    "claude.jsonl": _records_seed("corpus/tracelab/claude-session.trace.json", 16),
    "codex.jsonl": _records_seed("corpus/tracelab/codex-session.trace.json", 24),
    "swe-agent.traj": _json_seed("corpus/swe-agent/function_calling_simple.traj"),
    "open-operator-evals.json": _json_seed(
        "browser-records/open-operator-evals/results_no_screenshot.json"
    ),
    "browser-use.json": _json_seed("browser-records/browser-use/agent_history.json"),
    "agentlab.jsonl": _lines_seed("browser-records/agentlab/steps_info.jsonl", 4),
    "summary_info.json": _json_seed("browser-records/agentlab/summary_info.json"),
    "osworld.jsonl": _lines_seed("browser-records/osworld/traj.jsonl", 5),
    "cline.json": _json_seed("telemetry/cline-task/ui_messages.json"),
    "harbor-result.json": _json_seed("telemetry/harbor-trial/result.json"),
    "gemini-headless.json": _json_seed("telemetry/gemini-cli-headless.json"),
}
"""name -> (container kind, parsed content)."""

_DEEP: Any = "deep"
for _ in range(40):
    _DEEP = [_DEEP]

WRONG_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([10**400, -1, 0, 2**63, "\ud800", "", "2025-13-45T99:99:99"]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3),
    st.just(_DEEP),
)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every node under `value` (containers and leaves), breadth first, bounded."""
    found: list[tuple[Any, ...]] = []
    queue: list[tuple[Any, tuple[Any, ...]]] = [(value, path)]
    while queue and len(found) < 3000:
        node, where = queue.pop(0)
        children = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else []
        )
        for key, child in children:
            found.append((*where, key))
            queue.append((child, (*where, key)))
    return found


def _mutate(value: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    copy = json.loads(json.dumps(value))
    node = copy
    for key in path[:-1]:
        node = node[key]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = new
    return copy


def _render(kind: str, content: Any) -> bytes:
    if kind == "json":
        return json.dumps(content).encode("utf-8", errors="surrogatepass")
    if kind == "lines":
        return "\n".join(json.dumps(r) for r in content).encode("utf-8", errors="surrogatepass")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, member in content.items():
            archive.writestr(name, json.dumps(member))
    return buffer.getvalue()


@st.composite
def mutated_files(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(SEEDS)))
    kind, content = SEEDS[name]
    how = draw(st.sampled_from(["replace", "replace", "replace", "delete", "truncate", "bytes"]))
    if how in ("replace", "delete"):
        target = content
        prefix: tuple[Any, ...] = ()
        if kind == "zip":  # mutate inside one member
            member = draw(st.sampled_from(sorted(content)))
            target, prefix = content[member], (member,)
        nodes = _nodes(target)
        if nodes:
            path = draw(st.sampled_from(nodes))
            new = draw(WRONG_VALUES)
            content = _mutate(content, (*prefix, *path), new, delete=how == "delete")
        return name, _render(kind, content)
    data = _render(kind, content)
    cut = draw(st.integers(min_value=0, max_value=len(data)))
    if how == "truncate":
        return name, data[:cut]
    noise = draw(st.binary(min_size=1, max_size=8).map(lambda b: b"\xff\xfe" + b))
    return name, data[:cut] + noise + data[cut:]


@pytest.mark.slow
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated_files())
def test_import_auto_gives_a_clear_error_or_traces(case: tuple[str, bytes]) -> None:
    """A mutated real file is imported, or refused with a TraceError/ConfigError naming it."""
    name, data = case
    with tempfile.TemporaryDirectory(prefix="looplab-fuzz-") as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        try:
            _, runs = import_runs("auto", path)
        except (TraceError, ConfigError) as exc:
            refusal = str(exc)
        else:
            refusal = ""
        if refusal:
            assert str(path) in refusal
            return
        for written in write_runs(runs, Path(tmp) / "out"):
            trace = read_trace(written)
            assert trace.complete
            assert all(math.isfinite(e.start) and math.isfinite(e.end) for e in trace.events)


def test_lone_surrogates_become_replacement_characters(tmp_path: Path) -> None:
    """`"\\ud800"` is legal JSON but not UTF-8: imported as U+FFFD, so the trace writes."""
    data = json.loads((FIXTURES / "corpus/openhands/basic_interactions.json").read_text())
    data[1]["message"] = data[1]["args"]["content"] = "half a pair: \ud800"
    path = tmp_path / "events.json"
    path.write_text(json.dumps(data))
    [written] = write_runs(import_runs("auto", path)[1], tmp_path / "out")
    text = written.read_text(encoding="utf-8")
    assert "half a pair: \ufffd" in text


_NAN_USAGE = (
    b'{"trajectory_format": "mini-swe-agent-1.1", "info": {}, "messages": [{"role": '
    b'"assistant", "extra": {"response": {"usage": {"prompt_tokens": NaN}}}}]}'
)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            b'{"messages": [{"role": "user"}], "info": {}, "trajectory_form',
            r"line 1 column \d+: not valid JSON",
        ),
        (b"\xff\xfe\x00garbage", r"not a UTF-8 text file \(invalid byte at offset 0\)"),
        (
            b'{"session_id": "s", "round_index": 0, "timing_events": [{"timestamp": 1e400}]}\n',
            r"timing_events\[0\]\.timestamp: inf is not a timestamp",
        ),
        (
            _NAN_USAGE,
            r"not a usable mini-swe-agent file \(nan is not a finite number\); expected",
        ),
    ],
)
def test_named_refusals(tmp_path: Path, content: bytes, expected: str) -> None:
    """Truncated JSON, bad bytes, 1e400, NaN: a TraceError naming the file and the problem."""
    path = tmp_path / "input.json"
    path.write_bytes(content)
    with pytest.raises(TraceError, match=expected) as caught:
        import_runs("auto", path)
    assert str(path) in str(caught.value)


def test_objects_where_strings_belong_are_not_names(tmp_path: Path) -> None:
    """An object as a call id, tool name or exit status is dropped, not stringified."""
    trajectory = {
        "trajectory_format": "mini-swe-agent-1.1",
        "info": {"exit_status": {"a": 1}},
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"id": {"a": 1}, "function": {"name": ["x"], "arguments": {}}}],
            }
        ],
    }
    path = tmp_path / "t.traj.json"
    path.write_text(json.dumps(trajectory))
    [run] = import_runs("auto", path)[1]
    [tool] = [e for e in run.events if e.kind == "tool_call"]
    assert (tool.name, tool.call_id) == ("unknown", None)  # type: ignore[union-attr]
    assert run.report.end_reason == "unknown"
