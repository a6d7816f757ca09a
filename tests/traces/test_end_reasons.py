"""End reasons are one type (issue 48): `EndReason` members everywhere in looplab/, no bare
string literal of one outside `traces/end_reason.py`, and unknown ones still load."""

from __future__ import annotations

import ast
import json
import re
from datetime import UTC, datetime
from pathlib import Path

from looplab.traces.end_reason import EndReason
from looplab.traces.io import read_trace, write_trace
from looplab.traces.schema import RunEndEvent, RunStartEvent, TraceHeader

PACKAGE = Path(__file__).resolve().parents[2] / "looplab"
HOME = PACKAGE / "traces" / "end_reason.py"
VALUES = {member.value for member in EndReason}
DISTINCTIVE = {
    EndReason.STEP_LIMIT.value,
    EndReason.TOKEN_BUDGET.value,
    EndReason.WALL_TIME_BUDGET.value,
    EndReason.BACKEND_ERROR.value,
    EndReason.NO_COMPLETION_RESULT.value,
}
"""Values that mean nothing but an end reason: a bare literal of one is flagged anywhere."""
_REASONISH = re.compile(r"end_reason|[A-Z_]*REASONS?\b|\b_?[A-Z_]*ENDS(_[A-Z]+)?\b")
"""A name that holds end reasons: `end_reason`, `STOP_REASONS`, `FINISHED_ENDS`."""


_MAKERS = {"frozenset", "set", "tuple", "list"}


def _mentions(node: ast.AST) -> bool:
    """Whether `node` reads or names something holding end reasons."""
    for part in ast.walk(node):
        name = part.id if isinstance(part, ast.Name) else getattr(part, "attr", None)
        if isinstance(name, str) and _REASONISH.search(name):
            return True
    return False


def _reason_parts(node: ast.AST) -> list[ast.AST]:
    """The parts of `node` that hold an end reason's value (where a literal is a defect)."""
    if isinstance(node, ast.keyword) and node.arg == "end_reason":
        return [node.value]
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [node.value] if any(_mentions(t) for t in targets) else []
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        return [s for s in sides if not _mentions(s)] if any(map(_mentions, sides)) else []
    if isinstance(node, ast.Dict):
        return [
            value
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant) and key.value == "end_reason"
        ]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        returns = ast.unparse(node.returns) if node.returns else ""
        if "reason" in node.name or "EndReason" in returns:
            return [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value]
    return []


def _values(node: ast.AST) -> list[ast.Constant]:
    """The string constants `node` evaluates to (through `a if c else b`, `a or b`, tuples,
    sets, lists, `frozenset(...)`), not those it merely uses (`d.get("terminated")`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    if isinstance(node, ast.IfExp):
        return _values(node.body) + _values(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [c for value in node.values for c in _values(value)]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [c for element in node.elts for c in _values(element)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return [c for arg in node.args for c in _values(arg)] if node.func.id in _MAKERS else []
    return []


def bare_end_reasons(source: str) -> list[int]:
    """Lines of `source` spelling an end reason as a bare string literal: a distinctive
    value anywhere, any value where an end reason is assigned, passed, compared, keyed
    (`"end_reason": ...`) or returned by a function of end reasons."""
    tree = ast.parse(source)
    lines = {
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in DISTINCTIVE
    }
    for node in ast.walk(tree):
        for part in _reason_parts(node):
            lines.update(c.lineno for c in _values(part) if c.value in VALUES)
    return sorted(lines)


def test_no_bare_end_reason_literals_outside_the_enum() -> None:
    """No module but `traces/end_reason.py` spells `"timeout"`, `"finish"`, ... as an end
    reason: producers and readers use `EndReason` members."""
    offenders = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != HOME
        for line in bare_end_reasons(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_scan_finds_bare_literals() -> None:
    """The scan above is not vacuous: each way of spelling an end reason bare is found."""
    source = """
def _limit_reached(self) -> EndReason | None:
    return "step_limit"
x = end.end_reason == "timeout"
draft.end_reason = "finish"
y = RunEndDraft(end_reason="exit", end_time=1.0)
z = {"end_reason": "timeout", "error": "x"}
OK_ENDS = ("finish", "answer")
w = r.end_reason in ("backend_error", "error")
STOP_REASONS = frozenset({"timeout", "cancelled"})
draft.end_reason = "done" if last.get("terminated") else None
"""
    assert bare_end_reasons(source) == [3, 4, 5, 6, 7, 8, 9, 10, 11]
    assert bare_end_reasons('name = "finish"\nif tool.name != "finish": pass\n') == []


def _run_end(reason: str) -> RunEndEvent:
    return RunEndEvent.model_validate(
        {"run_id": "r", "start": 0.0, "end": 1.0, "end_reason": reason, "steps": 1}
    )


def test_known_reasons_load_as_members_unknown_ones_as_strings() -> None:
    """A known end reason reads back as its `EndReason` member, another harness's own
    (`submitted`, `message_limit`) as the string it was: both load, both dump unchanged."""
    known, unknown = _run_end("timeout"), _run_end("Submitted (exit_status)")
    assert known.end_reason is EndReason.TIMEOUT
    assert type(unknown.end_reason) is str and unknown.end_reason == "Submitted (exit_status)"
    assert json.loads(known.model_dump_json())["end_reason"] == "timeout"
    assert json.loads(unknown.model_dump_json())["end_reason"] == "Submitted (exit_status)"


def test_a_trace_keeps_its_end_reason_bytes(tmp_path: Path) -> None:
    """Written and read back, a trace's `run_end` line is byte for byte the same for a known
    and an unknown reason (the enum is a `str`: the JSON does not change)."""
    for reason in (EndReason.WALL_TIME_BUDGET, "exit_status: LimitsExceeded"):
        header = TraceHeader(run_id="r", created=datetime(2026, 1, 1, tzinfo=UTC))
        start = RunStartEvent.model_validate({"run_id": "r", "start": 0.0, "end": 0.0})
        path = tmp_path / f"{len(str(reason))}.jsonl"
        write_trace(path, header, [start, _run_end(reason)])
        first = path.read_bytes()
        again = read_trace(path)
        assert again.end is not None and again.end.end_reason == reason
        write_trace(path, again.header, again.events)
        assert path.read_bytes() == first
        assert f'"end_reason":"{reason}"' in first.decode()
