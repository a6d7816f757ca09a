"""Upstream faults are the upstream's: the proxy says so with 502/504, never blames itself
or the client (issue 36, finding 9).

A raw HTTP/1.1 upstream on loopback misbehaves on purpose, chosen by the request's model:
an HTML page with status 200, an HTML 503, a streamed 200 with no body, a body cut off by
a closed connection, a stream cut off mid-way, a reply that never comes. The real openai
client talks to a real `ProxyServer` in front of it; each case must come back as the
upstream's fault (status 502 or 504, the upstream's status and a sample of its body in the
message), in-band for a stream whose headers were already sent, and be logged as
`proxy.upstream_fault`, never as "Internal proxy error" or a complaint about the client's
JSON.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from looplab.backends.proxy.app import ProxyServer
from looplab.latency.presets import resolve_profile

pytestmark = [pytest.mark.reliability]

_HTML = b"<html><body><h1>502 Bad Gateway</h1>nginx</body></html>"
_CHUNK = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}\n\n'
)


def _reply(model: str) -> tuple[bytes, bool]:
    """The upstream's bytes for a request naming `model`, and whether to then hang."""
    if model == "html200":
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n"
        return head + b"content-length: %d\r\n\r\n" % len(_HTML) + _HTML, False
    if model == "html503":
        head = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/html\r\n"
        return head + b"content-length: %d\r\n\r\n" % len(_HTML) + _HTML, False
    if model == "empty-stream":
        return (
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 0\r\n\r\n",
            False,
        )
    if model == "reset-body":
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 900\r\n\r\n"
        return head + b'{"id": "c", "choi', False
    if model == "reset-stream":
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 5000\r\n\r\n"
        return head + _CHUNK, False
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n", True  # never finishes


class FaultyUpstream:
    """A raw HTTP/1.1 server on loopback whose replies are `_reply`'s (one per connection)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536) or b"\r\n\r\n"
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            ),
            0,
        )
        while len(body) < length:
            body += conn.recv(65536) or b" " * length
        reply, hang = _reply(json.loads(body)["model"])
        conn.sendall(reply)
        if hang:
            self._open.append(conn)
            return
        conn.close()

    def close(self) -> None:
        self.sock.close()
        for conn in self._open:
            conn.close()


@pytest.fixture
def proxy(request: pytest.FixtureRequest) -> Iterator[ProxyServer]:
    """A proxy in front of `FaultyUpstream` (for the hanging upstream, reads time out after
    1.5 s: `upstream_timeout_s`)."""
    upstream = FaultyUpstream()
    profile = resolve_profile("fast-750", ["ttft_s=0.01"])
    hang = "hang" in request.node.name
    extra: dict[str, Any] = {"upstream_timeout_s": 1.5} if hang else {}
    try:
        with ProxyServer(profile, upstream=upstream.base_url, **extra) as server:
            yield server
    finally:
        upstream.close()


CASES: list[tuple[str, bool, int, str]] = [
    ("html200", False, 502, "HTTP 200"),
    ("html200", True, 502, "HTTP 200"),
    ("html503", False, 502, "HTTP 503"),
    ("empty-stream", True, 502, "empty stream"),
    ("reset-body", False, 502, "HTTP 200"),
    ("reset-stream", True, 502, "broke off"),
    ("hang", False, 504, "timed out"),
]
"""(model, streamed, status the client must see, words its message must hold)."""


def _ask(base_url: str, model: str, stream: bool) -> tuple[int, str, str]:
    """(status, message, text received) of one call through the stock openai client."""
    client = openai.OpenAI(base_url=base_url, api_key="sk-placeholder", max_retries=0, timeout=20)
    messages: Any = [{"role": "user", "content": "hi"}]
    text = ""
    try:
        if not stream:
            client.chat.completions.create(model=model, messages=messages)
            return 200, "", text
        for chunk in client.chat.completions.create(model=model, messages=messages, stream=True):
            text += "".join(c.delta.content or "" for c in chunk.choices)
        return 200, "", text
    except openai.APIStatusError as exc:
        return exc.status_code, str(exc.message), text
    except openai.APIError as exc:  # raised in a stream by an SSE error event
        body = exc.body if isinstance(exc.body, dict) else {}
        code = str(body.get("code") or "")
        gateway = 504 if code == "upstream_timeout" else 502 if code.startswith("upstream_") else 0
        return gateway, str(exc.message), text
    finally:
        client.close()


@pytest.mark.parametrize(("model", "stream", "status", "words"), CASES)
def test_an_upstream_fault_is_the_upstreams(
    proxy: ProxyServer, model: str, stream: bool, status: int, words: str, campaign: Any
) -> None:
    """Each upstream fault reaches the client as 502/504 naming the upstream's status and
    what it did (in-band for a stream already answered), never a 500 or a silent end."""
    campaign.add("proxy upstream fault cases")
    got, message, text = _ask(proxy.base_url, model, stream)
    ok = got == status and "upstream" in message.lower() and words in message
    ok = ok and "Internal proxy error" not in message and "request body" not in message
    campaign.add("proxy upstream fault failures", 0 if ok else 1)
    assert ok, (got, message)
    if model == "reset-stream":
        assert text == "Hello"  # what came before the cut is still delivered
    call = proxy.proxy.history.calls[-1]
    assert call.error and "upstream" in call.error.lower()
