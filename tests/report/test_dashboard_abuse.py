"""The dashboard under abuse: strict Host headers, oversized request heads, and many
readers at once."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import httpx2
import pytest

from looplab.report.dashboard.server import DashboardServer
from looplab.serving.guard import MAX_HEAD_BYTES
from looplab.serving.hosts import host_check, split_host


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("127.0.0.1:8760", ("127.0.0.1", 8760)),
        ("LOCALHOST", ("localhost", None)),
        ("[::1]:8760", ("::1", 8760)),
        ("::1", ("::1", None)),
        ("127.0.0.1:18830@evil.com", (None, None)),
        ("127.0.0.1:x", (None, None)),
        ("[::1]x", (None, None)),
        ("evil.com/127.0.0.1", (None, None)),
    ],
)
def test_host_headers_are_parsed_strictly(header: str, expected: tuple[object, object]) -> None:
    """A Host header is host[:port] with a port of digits; anything else is no host."""
    assert split_host(header) == expected


def test_only_the_bound_address_and_port_pass() -> None:
    """On loopback: loopback names at the bound port (or none); another port, a userinfo
    trick or another name is refused (issue 27: `127.0.0.1:18830@evil.com` and
    `127.0.0.1:1` were accepted)."""
    allowed = host_check("127.0.0.1", 8760)
    assert allowed("127.0.0.1:8760") and allowed("localhost") and allowed("[::1]:8760")
    assert not allowed("127.0.0.1:8760@evil.com")
    assert not allowed("127.0.0.1:1")
    assert not allowed("evil.com:8760")


async def test_two_hundred_readers_at_once_get_pages(tmp_path: Path) -> None:
    """200 concurrent requests to the index are all answered 200 (no 503)."""
    with DashboardServer(tmp_path) as server:
        limits = httpx2.Limits(max_connections=200, max_keepalive_connections=0)
        async with httpx2.AsyncClient(limits=limits, timeout=60) as http:
            answers = await asyncio.gather(*(http.get(server.url) for _ in range(200)))
    statuses = [answer.status_code for answer in answers]
    assert statuses.count(200) == 200, sorted(set(statuses))


def test_an_oversized_request_head_is_refused(tmp_path: Path) -> None:
    """A request head past the serving guard's limit is answered 431 and closed (the cap
    h11 gave the dashboard before it ran on `looplab.serving`); the next is served."""
    with DashboardServer(tmp_path) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as conn:
            conn.sendall(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ")
            conn.sendall(b"a" * MAX_HEAD_BYTES)  # the head never ends: refused mid-head
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
        assert httpx2.get(server.url, timeout=30).status_code == 200
