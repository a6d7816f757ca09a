"""The proxy's raw HTTP/1.1 upstream client reads what httpx reads, and keeps connections."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import httpx2
import pytest

from looplab.backends.proxy.rawhttp import RawHttpError, RawPool, uses_raw_client
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile

PROFILE = ["ttft_s=0", "decode_tps=20000", "prefill_tps=null", "output_tokens=30"]
BODY = json.dumps(
    {
        "model": "looplab-lorem",
        "messages": [{"role": "user", "content": "Write a long answer."}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 30,
    }
).encode()
HEADERS = {"content-type": "application/json", "authorization": "Bearer k"}


async def _lines(client: RawPool | httpx2.AsyncClient, url: str) -> list[str]:
    async with client.stream("POST", url, content=BODY, headers=HEADERS) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return [line async for line in response.aiter_lines()]


def test_a_streamed_reply_reads_as_httpx_reads_it() -> None:
    """Against the real simulator (chunked SSE): the same lines, event for event, and the
    JSON body of a Content-Length reply."""

    async def main() -> None:
        async with SimulatorServer(resolve_profile("fast-750", PROFILE)) as server:
            url = f"{server.base_url}/chat/completions"
            pool = RawPool()
            async with httpx2.AsyncClient() as http:
                raw, ours = await _lines(pool, url), await _lines(http, url)
                async with pool.stream(
                    "GET", f"{server.base_url}/models", content=b"", headers={}
                ) as answer:
                    listed = json.loads(await answer.aread())
                assert listed == (await http.get(f"{server.base_url}/models")).json()
            await pool.aclose()
        assert raw[-2:] == ours[-2:] == ["data: [DONE]", ""]
        for lines in (raw, ours):
            events = [json.loads(x[6:]) for x in lines if x.startswith("data: {")]
            assert lines[::2] == [x for x in lines if x.startswith("data: ")]
            assert events[-1]["usage"]["completion_tokens"] == 30
            text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events[:-1])
            assert len(text.split()) >= 20

    asyncio.run(main())


def test_connections_are_kept_and_reused() -> None:
    """Three requests one after another go over one kept-alive connection."""

    async def main() -> None:
        async with SimulatorServer(resolve_profile("fast-750", PROFILE)) as server:
            pool = RawPool()
            url = f"{server.base_url}/chat/completions"
            writers = []
            for _ in range(3):
                await _lines(pool, url)
                (idle,) = pool._idle.values()
                writers.append(idle[0].writer)
            await pool.aclose()
        assert len(set(map(id, writers))) == 1

    asyncio.run(main())


async def _one_shot_server(
    reply: bytes, linger_s: float = 0.0
) -> tuple[asyncio.Server, int, Callable[[], Awaitable[None]]]:
    """A server that answers each connection's first request with `reply`, then closes
    it (`linger_s` later, unread whatever came meanwhile)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            await reader.readexactly(length)
            writer.write(reply)
            await writer.drain()
            await asyncio.sleep(linger_s)
        finally:  # also when the test's loop ends first
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]

    async def stop() -> None:
        server.close()
        await server.wait_closed()

    return server, port, stop


@pytest.mark.parametrize("linger_s", [0.0, 0.05])
def test_a_kept_connection_the_server_closed_is_retried_on_a_fresh_one(
    linger_s: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upstream closes a connection the pool kept (HTTP/1.1 keep-alive by default),
    at once (seen before the next request) or after the next request went out on it
    (seen when no reply comes): either way the request succeeds on a new connection, and
    a 2 MiB body goes out whole."""
    connects = []
    original = RawPool._connect

    async def counted(pool: RawPool, host: tuple[str, int]) -> object:
        connects.append(host)
        return await original(pool, host)

    monkeypatch.setattr(RawPool, "_connect", counted)

    async def main() -> list[bytes]:
        reply = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
        _, port, stop = await _one_shot_server(reply, linger_s)
        pool = RawPool()
        bodies = []
        for size in (2, 2, 2 << 20):
            async with pool.stream(
                "POST", f"http://127.0.0.1:{port}/v1/x", content=b"x" * size, headers={}
            ) as answer:
                bodies.append(await answer.aread())
            await asyncio.sleep(0.0 if linger_s else 0.1)  # closed and seen, or still open
        await pool.aclose()
        await stop()
        return bodies

    assert asyncio.run(main()) == [b"ok"] * 3
    assert len(connects) == 3


def test_a_reply_ended_by_close_is_read_whole() -> None:
    """No Content-Length, not chunked, `connection: close`: the body is what came before
    the close, and the connection is not kept."""

    async def main() -> tuple[bytes, int]:
        reply = b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nhello, world"
        _, port, stop = await _one_shot_server(reply)
        pool = RawPool()
        async with pool.stream(
            "POST", f"http://127.0.0.1:{port}/", content=b"{}", headers={}
        ) as answer:
            body = await answer.aread()
        kept = sum(len(idle) for idle in pool._idle.values())
        await stop()
        return body, kept

    assert asyncio.run(main()) == (b"hello, world", 0)


def test_nothing_listening_is_a_raw_http_error() -> None:
    """A refused connection is a `RawHttpError` naming the host and port."""

    async def main() -> None:
        _, port, stop = await _one_shot_server(b"")
        await stop()
        async with RawPool().stream("POST", f"http://127.0.0.1:{port}/", content=b"", headers={}):
            pass

    with pytest.raises(RawHttpError, match=r"cannot connect to 127\.0\.0\.1"):
        asyncio.run(main())


def test_garbage_is_not_taken_for_a_reply() -> None:
    """A reply that is not HTTP/1.x is a `RawHttpError`, not a hang or a parser traceback."""

    async def main() -> None:
        _, port, stop = await _one_shot_server(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
        try:
            async with RawPool().stream(
                "POST", f"http://127.0.0.1:{port}/", content=b"{}", headers={}
            ):
                pass
        finally:
            await stop()

    with pytest.raises(RawHttpError, match=r"not HTTP/1\.1"):
        asyncio.run(main())


@pytest.mark.parametrize(
    ("url", "env", "raw"),
    [
        ("http://127.0.0.1:8000/v1", {}, True),
        ("https://api.openai.com/v1", {}, False),
        ("http://10.0.0.5:8000/v1", {"HTTP_PROXY": "http://proxy:3128"}, False),
        ("http://10.0.0.5:8000/v1", {"HTTP_PROXY": "http://p:3128", "NO_PROXY": "10.0.0.5"}, True),
    ],
)
def test_only_plain_http_without_a_proxy_variable_goes_raw(
    monkeypatch: pytest.MonkeyPatch, url: str, env: dict[str, str], raw: bool
) -> None:
    """https and proxied upstreams keep httpx (TLS, proxies); plain http goes raw."""
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert uses_raw_client(url) is raw
