"""Fuzzed HTTP requests to the simulator: 200 or a 4xx in OpenAI's error shape, never a 500
(or a hang): no client mistake is a server error.

Cases are valid chat-completion requests with fields replaced by arbitrary JSON values,
arbitrary JSON documents, deeply nested bodies and byte soup, sent over real loopback
HTTP to one running simulator; the mutated requests also go through the pacing proxy in
front of it, which must answer each with the simulator's status (one request validator).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from looplab.backends.proxy.app import ProxyServer
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile

from .conftest import FUZZ

pytestmark = [pytest.mark.reliability]

VALID: dict[str, Any] = {
    "model": "looplab-lorem",
    "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "run the tests"},
    ],
    "max_tokens": 8,
    "stream": True,
    "stream_options": {"include_usage": True},
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "run_tests",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ],
}
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=15,
)
PATHS = st.sampled_from(
    [
        ("model",), ("messages",), ("messages", 0), ("messages", 1, "content"),
        ("messages", 1, "role"), ("messages", 1, "tool_calls"), ("max_tokens",),
        ("max_completion_tokens",), ("temperature",), ("top_p",), ("n",), ("stream",),
        ("stream_options",), ("tools",), ("tools", 0, "function"),
        ("tools", 0, "function", "parameters"), ("tools", 0, "function", "name"),
        ("tool_choice",), ("parallel_tool_calls",), ("stop",), ("seed",), ("logprobs",),
        ("response_format",),
    ]
)  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    """One fast simulator for every case."""
    profile = resolve_profile("fast-750", ["decode_tps=20000", "ttft_s=0", "prefill_tps=null"])
    with SimulatorServer(profile) as running:
        yield running


@pytest.fixture(scope="module")
def proxy(server: SimulatorServer) -> Iterator[ProxyServer]:
    """The pacing proxy in front of the simulator."""
    profile = resolve_profile("fast-750", ["decode_tps=20000", "ttft_s=0", "prefill_tps=null"])
    with ProxyServer(profile, upstream=server.base_url) as running:
        yield running


@pytest.fixture(scope="module")
def http() -> Iterator[httpx2.Client]:
    """A plain HTTP client (no retries: every answer is seen as it is)."""
    with httpx2.Client(timeout=30) as client:
        yield client


def _send(
    server: SimulatorServer | ProxyServer, http: httpx2.Client, body: bytes, campaign: Any
) -> int:
    """POST one body; anything but 200 or a well-formed 4xx counts as a traceback."""
    with campaign.case("http", ()):
        response = http.post(
            f"{server.base_url}/chat/completions",
            content=body,
            headers={"content-type": "application/json"},
        )
        if response.status_code == 200:
            return 200
        error = response.json().get("error", {})
        assert 400 <= response.status_code < 500, (response.status_code, error)
        assert error.get("type") and error.get("message"), response.text[:500]
    return response.status_code


def _replace(body: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    node: Any = body
    for key in path[:-1]:
        if isinstance(node, list):
            inside = isinstance(key, int) and key < len(node)
        else:
            inside = isinstance(node, dict) and key in node
        if not inside:
            return
        node = node[key]
    if isinstance(node, dict):
        node[path[-1]] = value


@FUZZ
@given(mutations=st.lists(st.tuples(PATHS, JSON), min_size=1, max_size=3))
def test_mutated_requests(
    server: SimulatorServer,
    proxy: ProxyServer,
    http: httpx2.Client,
    campaign: Any,
    mutations: list[tuple[tuple[Any, ...], Any]],
) -> None:
    """A valid request with fields replaced by arbitrary JSON values: the simulator and the
    proxy in front of it answer with the same status."""
    body = json.loads(json.dumps(VALID))
    for path, value in mutations:
        _replace(body, path, value)
    served = _send(server, http, json.dumps(body).encode(), campaign)
    assert _send(proxy, http, json.dumps(body).encode(), campaign) == served


@pytest.mark.parametrize("value", ["x", 5, [1], {"include_usage": "yes"}])
def test_proxy_validates_as_serve(
    server: SimulatorServer, proxy: ProxyServer, http: httpx2.Client, campaign: Any, value: Any
) -> None:
    """A bad `stream_options` is the same 400 naming the field from serve and the proxy."""
    body = json.dumps({**VALID, "stream_options": value}).encode()
    answers = [http.post(f"{s.base_url}/chat/completions", content=body) for s in (server, proxy)]
    for answer in answers:
        assert answer.status_code == 400, answer.text[:300]
        assert answer.json()["error"]["param"].startswith("stream_options")
    assert answers[0].json()["error"]["message"] == answers[1].json()["error"]["message"]


@FUZZ
@given(
    body=st.one_of(
        JSON.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=200),
        st.integers(min_value=1, max_value=200_000).map(
            lambda n: b'{"model": "looplab-lorem", "messages": ' + b"[" * n + b"]" * n + b"}"
        ),
        st.integers(min_value=1, max_value=3).map(
            lambda n: json.dumps(
                {**VALID, "messages": [{"role": "user", "content": "word " * (n * 120_000)}]}
            ).encode()
        ),
    )
)
def test_arbitrary_bodies(
    server: SimulatorServer, http: httpx2.Client, campaign: Any, body: bytes
) -> None:
    """Arbitrary JSON, byte soup, bodies nested up to 200,000 deep, and up to 1.8 MB."""
    _send(server, http, body, campaign)
