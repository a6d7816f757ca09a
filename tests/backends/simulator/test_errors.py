"""Every error path answers in OpenAI's error shape, and the server survives them all."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx2
import pytest

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile

FAST = ["decode_tps=5000", "ttft_s=0", "prefill_tps=null", "output_tokens=40"]


def _post(server: SimulatorServer, body: Any, *, raw: bytes | None = None) -> httpx2.Response:
    url = server.base_url + "/chat/completions"
    if raw is not None:
        return httpx2.post(url, content=raw, headers={"content-type": "application/json"})
    return httpx2.post(url, json=body)


def _error(response: httpx2.Response) -> dict[str, Any]:
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return dict(error)


USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": USER}, "model"),
        ({"model": "looplab-lorem", "messages": []}, "messages"),
        (
            {"model": "looplab-lorem", "messages": [{"role": "robot", "content": "x"}]},
            "messages[0].role",
        ),
        (
            {"model": "looplab-lorem", "messages": [{"role": "tool", "content": "x"}]},
            "messages[0].tool_call_id",
        ),
        ({"model": "looplab-lorem", "messages": USER, "max_tokens": 0}, "max_tokens"),
        (
            {"model": "looplab-lorem", "messages": USER, "tools": [{"type": "nope"}]},
            "tools[0].type",
        ),
    ],
)
def test_schema_errors_name_the_field(fast_server: SimulatorServer, body: Any, param: str) -> None:
    """A request that fails the schema gets 400 invalid_request_error naming the field."""
    response = _post(fast_server, body)
    assert response.status_code == 400
    error = _error(response)
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert param in error["message"]


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b"\xff\xfe", b""])
def test_malformed_json_is_400(fast_server: SimulatorServer, raw: bytes) -> None:
    """Bodies that are not a JSON object get 400 and the server keeps serving."""
    response = _post(fast_server, None, raw=raw)
    assert response.status_code == 400
    assert _error(response)["code"] == "invalid_json"
    assert httpx2.get(fast_server.base_url.removesuffix("/v1") + "/health").json()["status"] == "ok"


def test_unknown_model_is_404(fast_server: SimulatorServer) -> None:
    """An unknown model id gets 404 model_not_found listing what is served."""
    response = _post(fast_server, {"model": "gpt-5", "messages": USER})
    assert response.status_code == 404
    error = _error(response)
    assert error["code"] == "model_not_found"
    assert "looplab-lorem" in error["message"]


def test_n_above_one_is_refused(fast_server: SimulatorServer) -> None:
    """n > 1 is refused with a message saying to send n=1."""
    response = _post(fast_server, {"model": "looplab-lorem", "messages": USER, "n": 2})
    assert response.status_code == 400
    error = _error(response)
    assert error["param"] == "n"
    assert "n=1" in error["message"]


def test_context_window_exceeded() -> None:
    """A prompt over the profile's context window gets 400 context_length_exceeded."""
    profile = resolve_profile("fast-750", [*FAST, "context_window=50", "max_output_tokens=10"])
    with SimulatorServer(profile) as server:
        long = [{"role": "user", "content": "word " * 200}]
        response = _post(server, {"model": "looplab-lorem", "messages": long})
        assert response.status_code == 400
        error = _error(response)
        assert error["code"] == "context_length_exceeded"
        assert "50 tokens" in error["message"]
        too_many = _post(server, {"model": "looplab-lorem", "messages": USER, "max_tokens": 11})
        assert too_many.status_code == 400
        assert _error(too_many)["param"] == "max_tokens"


def test_full_queue_is_429_with_retry_after() -> None:
    """Over the concurrency limit with a full queue, the server answers 429 + retry-after."""
    profile = resolve_profile(
        "fast-750",
        ["decode_tps=100", "ttft_s=0", "output_tokens=100", "max_concurrency=1", "max_queue=0"],
    )
    with SimulatorServer(profile) as server:
        url = server.base_url + "/chat/completions"
        body = {"model": "looplab-lorem", "messages": USER, "stream": True}
        with httpx2.stream("POST", url, json=body) as busy:
            assert busy.status_code == 200
            chunks = busy.iter_bytes()  # keep the iterator: dropping it closes the stream
            next(chunks)  # the first request now holds the only slot
            refused = _post(server, {"model": "looplab-lorem", "messages": USER})
            assert refused.status_code == 429
            assert int(refused.headers["retry-after"]) >= 1
            assert _error(refused)["code"] == "rate_limit_exceeded"


@pytest.mark.timing
def test_queued_request_waits_and_counts_in_ttft() -> None:
    """With one slot and a queue, the second request waits for the first to finish."""
    profile = resolve_profile(
        "fast-750", ["decode_tps=1000", "ttft_s=0", "output_tokens=100", "max_concurrency=1"]
    )
    with SimulatorServer(profile) as server:

        async def one(client: httpx2.AsyncClient, tag: str) -> float:
            body = {"model": "looplab-lorem", "messages": [{"role": "user", "content": tag}]}
            start = time.perf_counter()
            response = await client.post(server.base_url + "/chat/completions", json=body)
            assert response.status_code == 200
            return time.perf_counter() - start

        async def both() -> list[float]:
            async with httpx2.AsyncClient() as client:
                return list(await asyncio.gather(one(client, "a"), one(client, "b")))

        durations = sorted(asyncio.run(both()))
        assert durations[0] == pytest.approx(0.1, abs=0.05)
        assert durations[1] == pytest.approx(0.2, abs=0.08)


def test_disconnect_frees_the_slot_at_once() -> None:
    """A client that drops a stream mid-way frees its concurrency slot immediately."""
    profile = resolve_profile(
        "fast-750",
        ["decode_tps=50", "ttft_s=0", "output_tokens=500", "max_concurrency=1", "max_queue=0"],
    )
    with SimulatorServer(profile) as server:
        health = server.base_url.removesuffix("/v1") + "/health"
        body = {"model": "looplab-lorem", "messages": USER, "stream": True}
        with httpx2.stream("POST", server.base_url + "/chat/completions", json=body) as response:
            chunks = response.iter_bytes()
            next(chunks)
            assert httpx2.get(health).json()["active"] == 1
        deadline = time.perf_counter() + 2.0
        while httpx2.get(health).json()["active"] != 0:
            assert time.perf_counter() < deadline, "slot still held 2 s after the disconnect"
            time.sleep(0.02)
        again = _post(server, {"model": "looplab-lorem", "messages": USER, "max_tokens": 2})
        assert again.status_code == 200


def test_unknown_path_and_method(fast_server: SimulatorServer) -> None:
    """Unknown paths are 404 and wrong methods 405, both in OpenAI's error shape."""
    assert _error(httpx2.get(fast_server.base_url + "/nope")) is not None
    wrong = httpx2.get(fast_server.base_url + "/chat/completions")
    assert wrong.status_code == 405
    assert _error(wrong)["message"].startswith("Method GET")


USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("change", "param", "code"),
    [
        ({"temperature": "hot"}, "temperature", "invalid_type"),
        ({"temperature": 3}, "temperature", "invalid_value"),
        ({"max_tokens": "5"}, "max_tokens", "invalid_type"),
        ({"stream": "yes"}, "stream", "invalid_type"),
        ({"tool_choice": "maybe"}, "tool_choice", "invalid_value"),
        ({"messages": [{"role": "user"}]}, "messages[0].content", "invalid_value"),
        ({"messages": [{"role": "user", "content": [{"type": "text"}]}]},
         "messages[0].content[0].text", "invalid_value"),
    ],
)  # fmt: skip
def test_invalid_types_are_400_naming_the_field(
    fast_server: SimulatorServer, change: dict[str, Any], param: str, code: str
) -> None:
    """What OpenAI answers 400 to is a 400 here too, with the field as OpenAI names it."""
    body = {"model": "looplab-lorem", "messages": USER, "max_tokens": 5, **change}
    response = _post(fast_server, body)
    assert response.status_code == 400
    error = _error(response)
    assert (error["param"], error["code"]) == (param, code)


def test_valid_sampling_parameters_are_accepted(fast_server: SimulatorServer) -> None:
    """Documented parameters with valid values pass (and are ignored by the simulator)."""
    body = {
        "model": "looplab-lorem", "messages": USER, "max_tokens": 5, "temperature": 1,
        "top_p": 0.5, "seed": 3, "stop": ["x"], "user": "u", "tool_choice": "auto",
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
    }  # fmt: skip
    assert _post(fast_server, body).status_code == 200


def test_deeply_nested_body_is_400_not_500(fast_server: SimulatorServer) -> None:
    """JSON nested beyond the parser's recursion limit is the client's error."""
    raw = b'{"model": "looplab-lorem", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    response = _post(fast_server, None, raw=raw)
    assert response.status_code == 400
    assert _error(response)["code"] == "invalid_json"


def test_megabyte_message_is_counted_not_refused() -> None:
    """A 1 MB message is counted in pieces: over this window it is a 400 naming the context
    length, never a 500 "too long to encode"."""
    profile = resolve_profile(
        "fast-750", [*FAST, "context_window=100000", "max_output_tokens=4096"]
    )
    with SimulatorServer(profile) as server:
        big = [{"role": "user", "content": "word " * 200_000}]
        response = _post(server, {"model": "looplab-lorem", "messages": big, "max_tokens": 5})
    assert response.status_code == 400
    error = _error(response)
    assert error["code"] == "context_length_exceeded"
    assert "200007" in error["message"] or "200010" in error["message"]


def test_long_text_is_counted_exactly_in_pieces() -> None:
    """Cutting before spaces keeps the count exact, and texts past the encoder's own input
    limit count like any other."""
    from looplab.latency.tokens import CHUNK_CHARS, chunks, default_tokenizer

    tokenizer = default_tokenizer()
    text = "alpha beta, gamma. " * (CHUNK_CHARS // 5)
    pieces = chunks(text)
    assert len(pieces) > 1 and "".join(pieces) == text
    whole = tokenizer._encode  # the encoder itself, on a text still within its input limit
    if whole is not None:
        assert tokenizer.count(text) == len(whole(text))
    assert tokenizer.count("a" * 1_000_000) > 0
