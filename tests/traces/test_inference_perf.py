"""inference-perf export: well-formed Weka session documents, the trace's timing, a config."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from looplab.cli.app import app
from looplab.traces.exporters.mooncake import mooncake_rows
from looplab.traces.importers import import_runs, write_runs
from looplab.traces.inputs import load_traces

_REQUEST_KEYS = {"t", "type", "model", "in", "out", "hash_ids", "api_time"}


def _traces(external: Path, tmp_path: Path) -> Path:
    _, runs = import_runs("openhands", external / "openhands" / "multi_swe_bench_output.jsonl")
    directory = tmp_path / "traces"
    write_runs(runs, directory)
    return directory


def test_sessions_are_well_formed_with_the_trace_timing(external: Path, tmp_path: Path) -> None:
    """`looplab export inference-perf`: one Weka document per trace, a request per call with
    a prompt count, by start: `t` from the first call, `api_time` its duration (so the gap to
    the next `t` is the agent's tool time), full 64-token blocks only, ids shared with the
    predecessor as `export mooncake` derives them; the config points at the documents."""
    directory = _traces(external, tmp_path)
    out = tmp_path / "ip"
    done = CliRunner().invoke(
        app,
        [
            *["--no-log-file", "export", "inference-perf", str(directory), "-o", str(out)],
            *["--url", "http://127.0.0.1:9", "--tokenizer", "local/tok", "--max-wait-s", "0.5"],
        ],
    )
    assert done.exit_code == 0, done.output
    assert "inference-perf --config_file" in done.output
    files = sorted((out / "sessions").glob("*.json"))
    documents = [json.loads(f.read_text()) for f in files]
    traces = load_traces([directory])
    assert [d["id"] for d in documents] == [t.header.run_id for t in traces]
    assert len(documents) == len(traces) > 1
    total = 0
    for document, trace in zip(documents, traces, strict=True):
        assert document["block_size"] == 64 and document["models"]
        calls = sorted((c for c in trace.model_calls() if c.prompt_tokens), key=lambda c: c.start)
        requests = document["requests"]
        assert len(requests) == len(calls) > 3
        total += len(requests)
        mooncake = mooncake_rows([trace], block_tokens=64).rows
        for request, call, row in zip(requests, calls, mooncake, strict=True):
            assert _REQUEST_KEYS <= set(request) <= _REQUEST_KEYS | {"ttft"}
            assert request["t"] == round(call.start - calls[0].start, 6)
            assert request["api_time"] == round(call.end - call.start, 6)
            assert request["in"] == call.prompt_tokens and request["out"] >= 1
            assert len(request["hash_ids"]) == request["in"] // 64
            assert request["hash_ids"] == row["hash_ids"][: request["in"] // 64]
        gaps = [b["t"] - (a["t"] + a["api_time"]) for a, b in itertools.pairwise(requests)]
        assert min(gaps) >= -1e-5 and max(gaps) > 0  # sequential calls, tool time between
        assert (
            sum(a["hash_ids"][:8] == b["hash_ids"][:8] for a, b in itertools.pairwise(requests))
            > len(requests) // 2
        )  # the conversation grows: prefixes reused
    assert f"{total} requests" in done.output
    config = yaml.safe_load((out / "config.yml").read_text())
    assert config["data"]["type"] == "weka_trace_replay"
    replay = config["data"]["weka_trace_replay"]
    assert Path(replay["trace_directory"]) == (out / "sessions").resolve()
    assert replay["max_wait_ms"] == 500 and replay["static_model_name"] == "looplab-lorem"
    assert config["load"]["type"] == "trace_session_replay"
    assert config["load"]["stages"] == [{"concurrent_sessions": 0, "num_sessions": len(traces)}]
    assert config["server"]["base_url"] == "http://127.0.0.1:9"
    assert config["tokenizer"]["pretrained_model_name_or_path"] == "local/tok"


def test_export_from_a_workload_model_and_bad_flags(tmp_path: Path) -> None:
    """`--workload`: two drawn sessions, two documents; TRACES with --workload, or an
    --output that is a file, are refused with the flag named."""
    model = Path(__file__).resolve().parents[2] / "tasks" / "workload" / "mini-swe-agent-deepseek"
    out = tmp_path / "drawn"
    args = ["--no-log-file", "export", "inference-perf", "--workload", str(model / "workload.yaml")]
    done = CliRunner().invoke(app, [*args, "--tasks", "2", "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert "2 session(s)" in done.output
    documents = [json.loads(f.read_text()) for f in sorted((out / "sessions").glob("*.json"))]
    assert len(documents) == 2 and all(len(d["requests"]) > 3 for d in documents)
    both = CliRunner().invoke(app, [*args, str(out), "-o", str(out)])
    assert both.exit_code != 0 and "not both" in f"{both.output}{both.exception}"
    file = tmp_path / "file"
    file.write_text("")
    bad = CliRunner().invoke(app, [*args, "-o", str(file)])
    assert bad.exit_code != 0 and "--output" in f"{bad.output}{bad.exception}"
