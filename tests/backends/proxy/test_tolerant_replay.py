"""Replay that survives divergence: a foreign agent whose tool prints the time, recorded
once, replayed at fast-750 with the tool re-run: strict misses, tolerant completes."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from looplab.backends.proxy.app import ProxyServer
from looplab.backends.proxy.follow import compare, session_root
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile

from .conftest import UPSTREAM_FAST
from .wrapped import decode_rate, only_trace, run_wrap

AGENT = Path(__file__).resolve().parents[2] / "fixtures" / "agents" / "clock_agent.py"


@pytest.fixture
def long_answers() -> Iterator[SimulatorServer]:
    """The fast upstream with 600-token text answers: the replay's paced decode then lasts
    ~0.84 s, not ~0.2 s, so a few ms of scheduler delay at each call's last token (CI read
    721.5 tok/s, 3.8% low, with 120-token answers) stays well inside the 3% asked."""
    fast = [*UPSTREAM_FAST[:-1], "output_tokens=600"]
    with SimulatorServer(resolve_profile("fast-750", fast)) as server:
        yield server


# the replayed stream's decode rate within 3% of 750 tok/s
@pytest.mark.timing
def test_clock_agent_strict_misses_tolerant_completes(
    long_answers: SimulatorServer, tmp_path: Path
) -> None:
    """Recorded against the simulator; at fast-750 strict answers step 1 with replay_miss,
    tolerant serves all 4 steps and reports steps 1-3 (the tool message's time) as divergent."""
    store = tmp_path / "rec"
    agent = [sys.executable, str(AGENT), "4"]
    recorded = run_wrap(
        tmp_path,
        "-p",
        "fast-750",
        "--upstream",
        long_answers.base_url,
        "--record",
        str(store),
        "-o",
        str(tmp_path / "rec-run"),
        "--",
        *agent,
    )
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    times = recorded.stdout.split("tool outputs:")[1].split()
    assert len(times) == 3 and all(float(t) > 0 for t in times)
    assert len((store / "index.jsonl").read_text().splitlines()) == 4

    strict = run_wrap(
        tmp_path,
        "-p",
        "fast-750",
        "--replay",
        str(store),
        "-o",
        str(tmp_path / "strict"),
        "--",
        *agent,
    )
    assert strict.returncode == 1, strict.stdout + strict.stderr[-3000:]
    assert "API error 400" in strict.stdout and "replay_miss" in strict.stdout
    assert "step 1: expected" in strict.stdout and "not in the recording" in strict.stdout

    tolerant = run_wrap(
        tmp_path,
        "-p",
        "fast-750",
        "--replay",
        str(store),
        "--replay-policy",
        "tolerant",
        "-o",
        str(tmp_path / "tolerant"),
        "--",
        *agent,
    )
    assert tolerant.returncode == 0, tolerant.stdout + tolerant.stderr[-3000:]
    assert "steps: 4" in tolerant.stdout
    assert "replay (tolerant): 3 divergence(s) from the recording" in tolerant.stderr
    trace = only_trace(tmp_path / "tolerant")
    assert trace.complete and trace.end is not None and trace.end.steps == 4
    assert trace.header.backend["replay_policy"] == "tolerant"
    divergences = trace.header.backend["divergences"]
    assert [d["step"] for d in divergences] == [1, 2, 3]
    assert [d["served"] for d in divergences] == [1, 2, 3]
    for d in divergences:
        # the first tool result is the first difference: [user, assistant, tool, ...]
        assert d["field"] == "messages[2].content" and d["message_index"] == 2
        assert 0.3 < d["similarity"] < 1.0
        assert 0.0 < d["shared_prefix"] < 1.0
    assert decode_rate(trace) == pytest.approx(750, rel=0.03)


async def _ask(base_url: str, content: str) -> str:
    messages: Any = [{"role": "user", "content": content}]
    async with openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0) as client:
        reply = await client.chat.completions.create(model="looplab-lorem", messages=messages)
    return reply.choices[0].message.content or ""


async def test_changed_opening_pairs_by_prefix_and_ends_with_the_recording(
    upstream: SimulatorServer, tmp_path: Path
) -> None:
    """A session whose first message differs follows the closest recorded session; a request
    past the recording is a 400 replay_miss naming the end of the recording."""
    store = tmp_path / "rec"
    profile = resolve_profile("fast-750", ["decode_tps=20000", "ttft_s=0"])
    with ProxyServer(profile, upstream=upstream.base_url, record=store) as recorder:
        first = await _ask(recorder.base_url, "Fix pager.py at 12:00:01")
        second = await _ask(recorder.base_url, "Summarise the changelog of release 7")
    with ProxyServer(profile, replay=store, replay_policy="tolerant") as replayer:
        assert await _ask(replayer.base_url, "Summarise the changelog of release 8") == second
        assert await _ask(replayer.base_url, "Fix pager.py at 12:00:02") == first
        with pytest.raises(openai.BadRequestError) as missed:
            await _ask(replayer.base_url, "Something else")
        assert replayer.proxy.recording is not None
        divergences = replayer.proxy.recording.divergences
    assert missed.value.body["code"] == "replay_miss"  # type: ignore[index]
    assert "end of recording" in missed.value.message
    assert [(d.step, d.served, d.field) for d in divergences[:2]] == [
        (0, 1, "messages[0].content"),
        (1, 0, "messages[0].content"),
    ]
    assert divergences[2].served is None and not divergences[2].recorded


def test_compare_names_the_first_difference() -> None:
    """compare: the first differing item and key, its similarity, the shared prefix; a
    non-conversation field when the conversation is equal; sessions keyed by their opening."""
    a = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "content": "1764680000.123"},
        ],
    }
    b = json.loads(json.dumps(a))
    b["messages"][1]["content"] = "1764680099.456"
    difference = compare("chat", a, b)
    assert difference.field == "messages[1].content" and difference.message_index == 1
    assert 0.5 < difference.similarity < 1.0 and 0.5 < difference.shared_prefix < 1.0
    assert session_root("chat", a) == session_root("chat", b)
    c = {**a, "temperature": 0.5}
    same = compare("chat", a, c)
    assert same.field == "temperature" and same.message_index is None
    assert same.shared_prefix == 1.0
    assert compare("chat", a, a).field is None
    assert session_root("responses", {"model": "m", "input": "hi"}) == session_root(
        "responses", {"model": "m", "input": [{"role": "user", "content": "hi"}]}
    )


def test_unknown_policy_is_refused(tmp_path: Path) -> None:
    """--replay-policy with an unknown name, or without --replay, exits 2 naming the flag."""
    bad = run_wrap(tmp_path, "--replay", str(tmp_path), "--replay-policy", "lenient", "--", "true")
    assert bad.returncode == 2 and "--replay-policy" in bad.stderr and "tolerant" in bad.stderr
    alone = run_wrap(tmp_path, "--replay-policy", "tolerant", "--", "true")
    assert alone.returncode == 2 and "needs --replay" in alone.stderr
