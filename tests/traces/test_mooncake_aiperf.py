"""The real AIPerf reads a `looplab export mooncake` file whole against `looplab serve`.

Needs LOOPLAB_AIPERF_PYTHON: a Python (>= 3.10) with `aiperf` installed, e.g.
`python3 -m venv /tmp/aiperf && /tmp/aiperf/bin/pip install aiperf` (CI does it in
.ci/setup-aiperf.sh); skipped without it.
AIPerf synthesizes prompts with a HuggingFace tokenizer; offline, the test trains a small
byte-level BPE one with `tokenizers` (an aiperf dependency) into a private HF cache.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from pathlib import Path

import pytest

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.traces.exporters.mooncake import mooncake_rows, mooncake_sessions
from looplab.traces.importers import import_runs
from looplab.traces.io import Trace

_TOKENIZER = """
import json, os, sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
snapshot = sys.argv[1]
tok = Tokenizer(models.BPE(unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
text = ["the agent reads the file and runs the tests again " * 50]
tok.train_from_iterator(text, trainers.BpeTrainer(vocab_size=600,
    special_tokens=["[UNK]", "<|endoftext|>"],
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
os.makedirs(snapshot, exist_ok=True)
tok.save(os.path.join(snapshot, "tokenizer.json"))
json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|endoftext|>",
           "unk_token": "[UNK]", "model_max_length": 10**7},
          open(os.path.join(snapshot, "tokenizer_config.json"), "w"))
"""


@pytest.mark.parametrize("sessions", [False, True], ids=["requests", "sessions"])
def test_aiperf_reads_every_request(external: Path, tmp_path: Path, sessions: bool) -> None:
    """AIPerf's mooncake_trace loader sends every exported request to the simulator, 0
    errors: open-loop timestamped requests, and closed-loop multi-turn sessions (their
    delays capped at 20 ms so the test takes seconds)."""
    python = os.environ.get("LOOPLAB_AIPERF_PYTHON")
    if not python:
        pytest.skip("LOOPLAB_AIPERF_PYTHON not set (a Python with aiperf installed)")
    _, runs = import_runs("openhands", external / "openhands" / "multi_swe_bench_output.jsonl")
    trace = Trace(header=runs[0].header, events=runs[0].events)
    rows = mooncake_sessions([trace]).rows if sessions else mooncake_rows([trace]).rows
    dataset = tmp_path / "trace.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    repo = tmp_path / "hf" / "hub" / "models--local--tok"
    revision = "0" * 40
    subprocess.run(
        [python, "-c", _TOKENIZER, str(repo / "snapshots" / revision)], check=True, timeout=120
    )
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    fast = resolve_profile("fast-750", ["decode_tps=20000", "ttft_s=0", "prefill_tps=null"])
    with SimulatorServer(fast) as server:
        command = [
            str(Path(python).parent / "aiperf"),
            "profile",
            "-m",
            "looplab-lorem",
            "--url",
            server.base_url.removesuffix("/v1"),
            "--endpoint-type",
            "chat",
            "--streaming",
            "--input-file",
            str(dataset),
            "--custom-dataset-type",
            "mooncake_trace",
            "--synthesis-speedup-ratio",
            "100",
            "--tokenizer",
            "local/tok",
            "--artifact-dir",
            str(tmp_path / "out"),
            "--ui",
            "none",
        ]
        if sessions:
            command += ["--inter-turn-delay-cap-seconds", "0.02"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    lines = (tmp_path / "out" / "profile_export.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == len(rows) > 20
    assert not [r for r in records if r.get("error")]
    if sessions:  # one conversation, its turns in order, each sent after the last reply
        meta = [r["metadata"] for r in records]
        assert {m["conversation_id"] for m in meta} == {trace.header.run_id}
        assert sorted(m["turn_index"] for m in meta) == list(range(len(rows)))
        by_turn = sorted(meta, key=lambda m: m["turn_index"])
        assert all(
            later["request_start_ns"] >= earlier["request_end_ns"]
            for earlier, later in itertools.pairwise(by_turn)
        )
