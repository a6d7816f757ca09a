"""Fuzzed traces fed to every reader: a clear `TraceError`/`ConfigError` or a result, never a
traceback or a hang.

Starting from real traces (an agent run on the simulator, with a fault-injected failed call,
and synthetic ones), cases are byte-level damage (truncation mid-character, flipped and
inserted bytes) and JSON-level damage (fields replaced by arbitrary values: NaN, infinities,
huge numbers, wrong types, deep nesting; lines dropped or repeated). Each case goes
through read, the results index, OTLP export (which must be strict JSON), virtual replay,
sweep, the report and the environment verdict.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from looplab.analysis.replay import replay_virtual
from looplab.analysis.sweep import run_sweep
from looplab.bench.synthetic import write_synthetic_experiment
from looplab.config import validate_model
from looplab.errors import LooplabError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.experiments.summaries.verdict import reference_verdict
from looplab.latency.presets import resolve_profile
from looplab.report.build import build_report
from looplab.traces.exporters.otel import export_otel
from looplab.traces.io import read_trace, write_trace
from looplab.traces.store import ResultStore

from .conftest import CAMPAIGN, FUZZ

if TYPE_CHECKING:
    from tests.conftest import BuildOnce

pytestmark = [pytest.mark.reliability]

PROFILE = resolve_profile("fast-750")


@pytest.fixture(scope="session")
def seed_traces(build_once: BuildOnce) -> list[bytes]:
    """Real traces: a scripted run, a run whose model calls always fail, synthetic runs
    (built once per test run)."""
    root = build_once("seed-traces", _build_seed_traces)
    files = sorted((root / "exp" / "traces").glob("*.jsonl"))
    files += sorted((root / "synthetic").rglob("*.jsonl"))[:3]
    assert len(files) >= 4
    return [f.read_bytes() for f in files]


def _build_seed_traces(root: Path) -> None:
    base = {
        "name": "seed",
        "clock": "virtual",
        "tasks": ["coding/fix-pager"],
        "agent": {"retry": {"max_attempts": 2, "base_delay_s": 0.01}},
        "backends": [
            {"name": "ok", "profile": "fast-750"},
            {"name": "broken", "profile": "fast-750", "overrides": {"faults": {"error_rate": 1}}},
        ],
        "output_dir": str(root / "exp"),
    }
    runner = ExperimentRunner(validate_model(ExperimentConfig, base))
    runner.prepare_directory(fresh=True)
    asyncio.run(runner.run())
    write_synthetic_experiment(root / "synthetic", 3)


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, -1e308, 5e-324, 2**63, -(2**63) - 1, 1e18]),
    st.text(max_size=20),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def _json_damage(lines: list[bytes], data: st.DataObject) -> list[bytes]:
    """Replace, delete or nest fields of a few lines; drop or repeat lines."""
    out = list(lines)
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        index = data.draw(st.integers(min_value=0, max_value=len(out) - 1))
        action = data.draw(st.sampled_from(["field", "delete", "drop", "repeat", "deep"]))
        try:
            record = json.loads(out[index])
        except ValueError:
            continue
        if action in ("field", "delete", "deep") and isinstance(record, dict) and record:
            key = data.draw(st.sampled_from(sorted(record)))
            if action == "delete":
                del record[key]
            elif action == "deep":
                record[key] = json.loads("[" * 500 + "]" * 500)
            else:
                record[key] = data.draw(VALUES)
            out[index] = json.dumps(record).encode()
        elif action == "drop" and len(out) > 1:
            del out[index]
        elif action == "repeat":
            out.insert(index, out[index])
    return out


def _byte_damage(raw: bytes, data: st.DataObject) -> bytes:
    at = data.draw(st.integers(min_value=0, max_value=len(raw)))
    action = data.draw(st.sampled_from(["truncate", "flip", "insert", "cut-mid-char"]))
    if action == "truncate":
        return raw[:at]
    if action == "flip" and at < len(raw):
        return raw[:at] + bytes([raw[at] ^ data.draw(st.integers(1, 255))]) + raw[at + 1 :]
    if action == "insert":
        return raw[:at] + data.draw(st.binary(min_size=1, max_size=8)) + raw[at:]
    return raw.rstrip(b"\n") + '\n{"kind": "é'.encode()[:-1]  # torn inside a character


def _consume(directory: Path, path: Path) -> None:
    """Everything that reads traces, on one damaged trace."""
    ResultStore.rebuild_file(directory / "results.duckdb", directory)
    reference_verdict(directory)
    trace = read_trace(path)
    CAMPAIGN.add("trace cases read")
    json.dumps(export_otel(trace), allow_nan=False)
    replayed = replay_virtual(trace, PROFILE)
    write_trace(directory / "replayed" / "r.jsonl", replayed.header, replayed.events)
    run_sweep([trace], [80.0, 750.0], [0.3], PROFILE)
    build_report([path])
    CAMPAIGN.add("trace cases through every reader")


@FUZZ
@given(data=st.data())
def test_damaged_traces(campaign: Any, seed_traces: list[bytes], data: st.DataObject) -> None:
    """Byte- and JSON-level damage to real traces."""
    raw = data.draw(st.sampled_from(seed_traces))
    if data.draw(st.booleans()):
        raw = _byte_damage(raw, data)
    else:
        raw = b"\n".join(_json_damage(raw.splitlines(), data)) + b"\n"
    scratch = Path(tempfile.mkdtemp(prefix="looplab-fuzz-"))
    try:
        path = scratch / "run.jsonl"
        path.write_bytes(raw)
        with campaign.case("trace", (LooplabError,)):
            _consume(scratch, path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
