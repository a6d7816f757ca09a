"""The real inference-perf replays a `looplab export inference-perf` directory on `looplab serve`.

Needs LOOPLAB_INFERENCE_PERF_PYTHON: a Python (>= 3.12) with `inference-perf` 0.7 installed,
e.g. `python3.12 -m venv /tmp/ip && /tmp/ip/bin/pip install inference-perf` (CI does it in
.ci/setup-inference-perf.sh); skipped without it.
inference-perf rebuilds prompts with a HuggingFace tokenizer; offline, the test trains a
byte-level BPE (with `tokenizers`, an inference-perf dependency) on inference-perf's own
Shakespeare corpus, about 3.6 characters a token, near the simulator's 4.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.cli.app import app
from looplab.latency.presets import resolve_profile
from looplab.traces.importers import import_runs, write_runs

_TOKENIZER = """
import json, os, sys
from importlib.resources import files
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
target = sys.argv[1]
text = files("inference_perf").joinpath("assets/shakespeare.txt").read_text(encoding="utf-8")
tok = Tokenizer(models.BPE(unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
tok.train_from_iterator([text[:1_000_000]], trainers.BpeTrainer(vocab_size=4000,
    special_tokens=["[UNK]", "<|endoftext|>"],
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
os.makedirs(target, exist_ok=True)
tok.save(os.path.join(target, "tokenizer.json"))
json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|endoftext|>",
           "unk_token": "[UNK]", "model_max_length": 10**7},
          open(os.path.join(target, "tokenizer_config.json"), "w"))
"""


def test_inference_perf_replays_every_request(external: Path, tmp_path: Path) -> None:
    """inference-perf's weka_trace_replay sends every exported request of every session to
    the simulator, 0 errors, each asking for its recorded output length, its rebuilt prompt near the
    recorded length; sessions run one at a
    time (--concurrency 1) and each request only after the previous one's reply (recorded
    tool gaps capped at 20 ms so the test takes seconds)."""
    python = os.environ.get("LOOPLAB_INFERENCE_PERF_PYTHON")
    if not python:
        pytest.skip("LOOPLAB_INFERENCE_PERF_PYTHON not set (a Python >= 3.12 with inference-perf)")
    _, runs = import_runs("openhands", external / "openhands" / "multi_swe_bench_output.jsonl")
    write_runs(runs, tmp_path / "traces")
    tokenizer = tmp_path / "tokenizer"
    subprocess.run([python, "-c", _TOKENIZER, str(tokenizer)], check=True, timeout=300)
    fast = resolve_profile("fast-750", ["decode_tps=20000", "ttft_s=0", "prefill_tps=null"])
    out = tmp_path / "ip"
    with SimulatorServer(fast) as server:
        args = ["--no-log-file", "export", "inference-perf", str(tmp_path / "traces")]
        args += ["-o", str(out), "--url", server.base_url.removesuffix("/v1")]
        args += ["--tokenizer", str(tokenizer), "--concurrency", "1", "--max-wait-s", "0.02"]
        exported = CliRunner().invoke(app, args)
        assert exported.exit_code == 0, exported.output
        env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
        command = [str(Path(python).parent / "inference-perf"), "--config_file"]
        done = subprocess.run(
            [*command, str(out / "config.yml")],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    documents = [json.loads(f.read_text()) for f in sorted((out / "sessions").glob("*.json"))]
    sent = [r for d in documents for r in d["requests"]]
    records = json.loads((out / "reports" / "per_request_lifecycle_metrics.json").read_text())
    assert len(records) == len(sent) > 20
    assert not [r for r in records if r["error"]]
    bodies = [json.loads(r["request"]) for r in records]
    assert sorted(b["max_tokens"] for b in bodies) == sorted(r["out"] for r in sent)
    usage = [r["info"]["response_metrics"]["server_usage"] for r in records]
    prompts = sum(u["prompt_tokens"] for u in usage) / sum(r["in"] for r in sent)
    assert 0.6 < prompts < 1.4, prompts  # rebuilt prompts near the recorded lengths
    summary = json.loads((out / "reports" / "summary_session_lifecycle_metrics.json").read_text())
    assert summary["num_sessions"] == len(documents) > 1
    assert summary["num_sessions_failed"] == 0
    assert summary["total_events_completed"] == len(sent)
    spans = sorted((r["start_time"], r["end_time"]) for r in records)
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(spans))
