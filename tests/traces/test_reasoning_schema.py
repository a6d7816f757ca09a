"""The reasoning phase in the trace schema and the store: old traces and stores still read."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from looplab.traces.schema import ModelCallEvent
from looplab.traces.store import ResultStore

OLD_CALL = (
    '{"kind": "model_call", "run_id": "r", "step": 0, "start": 0.0, "end": 2.0, "sent": 0.0,'
    ' "first_token": 1.5, "last_token": 2.0, "completion_tokens": 300, "reasoning_tokens": 200}'
)


def test_a_call_without_reasoning_time_keeps_it_inside_ttft() -> None:
    """A model_call line written before `reasoning_s` existed reads with the reasoning's
    time unknown: TTFT is then the whole sent -> first visible token."""
    call = ModelCallEvent.model_validate_json(OLD_CALL)
    assert call.reasoning_s is None
    assert call.ttft_s == call.first_visible_s == 1.5
    known = call.model_copy(update={"reasoning_s": 1.0})
    assert known.ttft_s == pytest.approx(0.5)
    assert known.first_visible_s == 1.5


def test_an_older_store_gets_the_new_columns(tmp_path: Path) -> None:
    """A results.duckdb made before the reasoning columns is opened and indexed into."""
    path = tmp_path / "results.duckdb"
    old = duckdb.connect(str(path))
    old.execute(
        "CREATE TABLE model_calls (run_id VARCHAR, step INTEGER, start_s DOUBLE, end_s DOUBLE,"
        " client_queue_s DOUBLE, ttft_s DOUBLE, decode_s DOUBLE, prompt_tokens BIGINT,"
        " cached_tokens BIGINT, completion_tokens BIGINT, reasoning_tokens BIGINT,"
        " finish_reason VARCHAR, attempts INTEGER, estimated VARCHAR)"
    )
    old.close()
    with ResultStore(path) as store:
        columns = [row[0] for row in store.query("DESCRIBE model_calls")]
    assert columns[-3:] == ["reasoning_s", "first_visible_s", "purpose"]
