"""The raw bytes of a stream: what the openai client would hide."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from looplab.backends.simulator.inprocess import SimulatorServer


def _events(server: SimulatorServer, body: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    with httpx2.stream("POST", server.base_url + "/chat/completions", json=body) as response:
        assert response.status_code == 200
        text = response.read().decode()
        headers = dict(response.headers)
    events = [block.removeprefix("data: ") for block in text.split("\n\n") if block]
    return events, headers


def test_role_arrives_with_first_token(fast_server: SimulatorServer) -> None:
    """No role-only chunk: the first chunk carries the role and the first token together."""
    body = {
        "model": "looplab-lorem",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
    }
    events, headers = _events(fast_server, body)
    assert headers["content-type"].startswith("text/event-stream")
    assert events[-1] == "[DONE]"
    first = json.loads(events[0])
    delta = first["choices"][0]["delta"]
    assert delta["role"] == "assistant"
    assert delta["content"]
    later = [json.loads(e)["choices"][0]["delta"] for e in events[1:-1]]
    assert all("role" not in d for d in later)
    assert first["object"] == "chat.completion.chunk"


def test_usage_chunk_precedes_done(fast_server: SimulatorServer) -> None:
    """With include_usage, every chunk has usage null and a choices-[] usage chunk comes last."""
    body = {
        "model": "looplab-lorem",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    events, _ = _events(fast_server, body)
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["usage"] is None for c in chunks[:-1])
    assert chunks[-1]["choices"] == []
    usage = chunks[-1]["usage"]
    assert usage["completion_tokens_details"]["reasoning_tokens"] == 0
    assert "cached_tokens" in usage["prompt_tokens_details"]
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


def test_timing_endpoint_reports_intended_and_actual(fast_server: SimulatorServer) -> None:
    """Each response names a request id whose intended vs actual release times can be read."""
    body = {
        "model": "looplab-lorem",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
    }
    _, headers = _events(fast_server, body)
    request_id = headers["x-looplab-request-id"]
    assert headers["x-request-id"] == request_id
    timing = httpx2.get(f"{fast_server.base_url}/looplab/requests/{request_id}/timing").json()
    assert timing["outcome"] == "completed"
    assert timing["visible_tokens"] == 40
    assert sum(stop - start for start, stop, _, _ in timing["releases"]) == 40
    assert timing["intended_rate_tps"] == 5000
    missing = httpx2.get(f"{fast_server.base_url}/looplab/requests/nope/timing")
    assert missing.status_code == 404
