"""`looplab bench` failures name their reason (issue 36, finding 10: `error: raw bench
client: ` with nothing after it at 1,024 streams).

The raw client is driven against real loopback sockets: a server that closes each
connection before answering (what a server out of file descriptors does), and this
process's own open-file limit lowered below the streams it opens (EMFILE at connect).
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from collections.abc import Iterator

import pytest

from looplab.bench.raw_load import raw_streams
from looplab.errors import BackendError

pytestmark = [pytest.mark.reliability]


async def _closing_server() -> asyncio.Server:
    async def close_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")  # the request's head: then close, no reply
        writer.close()

    return await asyncio.start_server(close_at_once, "127.0.0.1", 0)


def _starts(count: int) -> dict[int, float]:
    now = time.perf_counter()
    return {i: now for i in range(count)}


def test_a_connection_closed_before_the_status_line_is_named() -> None:
    """A server closing without a status line: the reason says so and names `ulimit -n`."""

    async def scenario() -> str:
        server = await _closing_server()
        port = server.sockets[0].getsockname()[1]
        try:
            with pytest.raises(BackendError) as caught:
                await raw_streams(f"http://127.0.0.1:{port}/v1", "m", _starts(2), rounds=1, tag="t")
        finally:
            server.close()
            await server.wait_closed()
        return str(caught.value)

    reason = asyncio.run(scenario())
    assert reason.startswith("raw bench client: ")
    assert "closed the connection before answering" in reason
    assert "ulimit -n" in reason


@pytest.fixture
def few_files() -> Iterator[int]:
    """This process's soft open-file limit lowered to leave about 40 descriptors free;
    yields a stream count that needs more than those (40 more than are free).

    The count is the free descriptors below the limit plus 40, not the limit itself: a
    process holding thousands of descriptors (an xdist worker late in the run) would
    otherwise open thousands of streams, each failing on its own, before the test ends."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    opened = [int(fd) for fd in os.listdir("/proc/self/fd")]
    limit = len(opened) + 40
    free = limit - sum(fd < limit for fd in opened)  # the limit caps descriptor numbers
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    try:
        yield free + 40
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_too_many_open_files_is_named_with_its_fix(few_files: int) -> None:
    """EMFILE while opening streams: `OSError: [Errno 24] Too many open files` and the fix."""

    async def scenario() -> str:
        server = await _closing_server()
        port = server.sockets[0].getsockname()[1]
        try:
            with pytest.raises(BackendError) as caught:
                await raw_streams(
                    f"http://127.0.0.1:{port}/v1", "m", _starts(few_files), rounds=1, tag="t"
                )
        finally:
            server.close()
            await server.wait_closed()
        return str(caught.value)

    reason = asyncio.run(scenario())
    assert "OSError: [Errno 24] Too many open files" in reason, reason
    assert "ulimit -n" in reason
