"""The trace header's `cell` is a typed `TraceCell` (issue 48): read by attribute, and its
JSON the same as the former dict's (keys given, extra keys kept, no nulls added)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from looplab.analysis.replay import replayed_cell
from looplab.latency.presets import resolve_profile
from looplab.traces.cell import TraceCell
from looplab.traces.schema import TraceHeader

PACKAGE = Path(__file__).resolve().parents[2] / "looplab"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "replay" / "fix-pager-scripted.jsonl"
_STRING_READ = re.compile(r"""cell\.get\(|cell\[\s*["']""")


def _header(cell: object) -> TraceHeader:
    return TraceHeader.model_validate(
        {"run_id": "r", "created": datetime(2026, 1, 1, tzinfo=UTC), "cell": cell}
    )


def test_a_recorded_header_dumps_as_it_was_written() -> None:
    """A looplab trace's header line reads and dumps to the same JSON, `cell` included."""
    line = json.loads(FIXTURE.read_text(encoding="utf-8").splitlines()[0])
    header = TraceHeader.model_validate(line)
    assert header.cell.backend == "fast-750" and header.cell.repetition == 0
    dumped = header.model_dump(mode="json")
    assert dumped == {**line, "identity": None}  # an older header: no identity yet
    assert list(dumped["cell"]) == list(line["cell"])


def test_cells_keep_their_keys_and_add_none() -> None:
    """An empty cell dumps `{}`, an explicit null stays, a foreign key survives the round
    trip (and is readable as an extra)."""
    assert _header({}).model_dump(mode="json")["cell"] == {}
    given = {"backend": "b", "variant": None, "profile": "old-name", "custom": [1, 2]}
    cell = _header(given).cell
    assert cell.model_dump(mode="json") == given
    assert cell.model_extra == {"profile": "old-name", "custom": [1, 2]}
    assert json.loads(_header(given).model_dump_json())["cell"] == given


def test_a_damaged_cell_is_refused() -> None:
    """A cell field of the wrong type fails validation by name (a repetition `true` or
    `"1"`, a backend number), as any other header field does."""
    for bad in ({"repetition": True}, {"seed": "1"}, {"backend": 7}):
        with pytest.raises(ValidationError, match="cell"):
            _header(bad)


def test_a_replays_cell_names_its_profile_and_keeps_the_original() -> None:
    """`replayed_cell`: the backend becomes the profile replayed at, the original goes to
    `replayed_from`; the other keys stay, and a cell without a backend is unchanged."""
    cell = TraceCell.model_validate({"backend": "slow-80", "task": "t", "seed": 3, "x": 1})
    replayed = replayed_cell(cell, resolve_profile("fast-750"))
    assert replayed.model_dump(mode="json") == {
        "backend": "fast-750",
        "task": "t",
        "seed": 3,
        "replayed_from": "slow-80",
        "x": 1,
    }
    assert replayed_cell(TraceCell(), resolve_profile("fast-750")).model_dump() == {}


def test_no_module_reads_the_cell_by_string_key() -> None:
    """`cell.get("backend")` / `cell["seed"]` appear nowhere in looplab/: attributes only."""
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _STRING_READ.search(line)
    ]
    assert offenders == []
