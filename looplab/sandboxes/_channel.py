"""Host side of the in-sandbox helper protocol (see `_inside.py`).

Messages are a 4-byte big-endian length and a JSON object; requests carry an id so that
several may be in flight. `HelperChannel` works over any pair of byte streams: the pipes
of a local helper process, or a Docker attach socket (through `DockerFrames`, which strips
Docker's stdout/stderr multiplexing headers).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import struct
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from looplab.errors import SandboxError
from looplab.sandbox_contract import ExecResult
from looplab.sandboxes._paths import workspace_relative
from looplab.sandboxes._support import render_output

__all__ = [
    "DockerFrames",
    "HelperChannel",
    "command_argv",
    "decode_b64",
    "encode_b64",
    "file_request",
    "helper_source",
    "run_command",
]

ReadExactly = Callable[[int], Awaitable[bytes]]
CANCEL_WAIT_S = 10.0
"""Longest wait for the helper to kill a cancelled command's tree (it gives up at 5 s)."""


HELPER_PARTS = ("_inside_procs.py", "_inside_files.py", "_inside.py")
"""The helper's source files, in the order they are joined (each uses the ones before)."""


@cache
def helper_source() -> str:
    """Return the source of the in-sandbox helper (sent as `python3 -c SOURCE`): its parts
    joined, without the `from looplab.` lines that tie them together on the host."""
    folder = Path(__file__).parent
    parts = []
    for name in HELPER_PARTS:
        kept, skipping = [], False
        for line in (folder / name).read_text().splitlines():
            if line.startswith("from looplab."):
                skipping = line.rstrip().endswith("(")
                continue
            if skipping:
                skipping = line.strip() != ")"
                continue
            kept.append(line)
        parts.append("\n".join(kept))
    return "\n\n".join(parts) + "\n"


class DockerFrames:
    """Turns Docker's multiplexed attach stream into the helper's plain stdout bytes."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        """Args: reader: the attach socket's stream (8-byte header + payload frames)."""
        self._reader = reader
        self._buffer = bytearray()

    async def read_exactly(self, size: int) -> bytes:
        """Return the next `size` bytes of the container's stdout.

        Raises:
            asyncio.IncompleteReadError: the stream ended first.
        """
        while len(self._buffer) < size:
            header = await self._reader.readexactly(8)
            stream, length = header[0], struct.unpack(">I", header[4:])[0]
            payload = await self._reader.readexactly(length)
            if stream == 1:
                self._buffer += payload
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data


class HelperChannel:
    """Request/reply client of one in-sandbox helper."""

    def __init__(
        self, read_exactly: ReadExactly, writer: asyncio.StreamWriter, *, sandbox_id: str
    ) -> None:
        """Start reading replies.

        Args:
            read_exactly: reads exactly n bytes of the helper's output.
            writer: the helper's input.
            sandbox_id: id for errors.
        """
        self._read_exactly = read_exactly
        self._writer = writer
        self.sandbox_id = sandbox_id
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._broken: str | None = None
        self._reader_task = asyncio.get_running_loop().create_task(self._read_replies())

    async def request(self, op: str, *, wait_s: float = 60.0, **fields: Any) -> dict[str, Any]:
        """Send one request and return its reply.

        Args:
            op: the helper operation (`ping`, `exec`, `read`, `write`, `list`, `untar`).
            wait_s: seconds to wait for the reply before declaring the helper broken.
            **fields: the operation's arguments.

        Returns:
            The reply object.

        Raises:
            SandboxError: the helper is gone, did not answer in time, failed, or refused a
                path outside the workspace.
            FileNotFoundError: the named file or directory does not exist.
            asyncio.CancelledError: the caller was cancelled; for `exec`, once the helper
                has killed the command's tree.
        """
        if self._broken is not None:
            raise SandboxError(
                f"sandbox helper is gone: {self._broken}", sandbox_id=self.sandbox_id
            )
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        body = json.dumps({"id": request_id, "op": op, **fields}).encode()
        try:
            self._writer.write(struct.pack(">I", len(body)) + body)
            await self._writer.drain()
            reply = await asyncio.wait_for(future, wait_s)
        except (OSError, ConnectionError) as exc:
            raise SandboxError(
                f"sandbox helper cannot be reached: {exc}", sandbox_id=self.sandbox_id
            ) from exc
        except TimeoutError:
            raise SandboxError(
                f"sandbox helper did not answer {op!r} within {wait_s:.0f} s",
                sandbox_id=self.sandbox_id,
            ) from None
        except asyncio.CancelledError:
            if op == "exec" and "cancel" not in fields:
                await self._cancel_exec(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)
            if future.done() and not future.cancelled():
                future.exception()  # seen: a write that failed first leaves it unread
        error = reply.get("error")
        if error == "not_found":
            raise FileNotFoundError(reply.get("message", ""))
        if error is not None:
            raise SandboxError(str(reply.get("message", error)), sandbox_id=self.sandbox_id)
        return reply

    async def _cancel_exec(self, request_id: int) -> None:
        """Have the helper kill the command of a cancelled exec request, its whole tree
        (setsid children too), within `CANCEL_WAIT_S`: asked again while the command has
        not started yet (and its own reply has not come); a helper gone has killed it."""
        arrived: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = arrived  # the exec's own reply, should it come
        deadline = time.monotonic() + CANCEL_WAIT_S
        try:
            while not arrived.done() and time.monotonic() < deadline:
                reply = await self.request("exec", wait_s=CANCEL_WAIT_S, cancel=request_id)
                if reply.get("cancelled"):
                    return
                await asyncio.sleep(0.02)
        except (SandboxError, FileNotFoundError):
            return
        finally:
            if arrived.done() and not arrived.cancelled():
                arrived.exception()  # seen: the helper may be gone

    async def close(self) -> None:
        """Close the helper's input (it then stops every command and exits)."""
        self._broken = self._broken or "closed"
        with contextlib.suppress(OSError, RuntimeError):
            self._writer.close()
        self._reader_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, OSError):
            await self._reader_task

    async def _read_replies(self) -> None:
        """Resolve pending requests with replies until the stream ends."""
        try:
            while True:
                (size,) = struct.unpack(">I", await self._read_exactly(4))
                reply = json.loads(await self._read_exactly(size))
                future = self._pending.get(reply.get("id"))
                if future is not None and not future.done():
                    future.set_result(reply)
        except (asyncio.IncompleteReadError, OSError, ValueError) as exc:
            self._broken = f"its output ended ({type(exc).__name__})"
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(
                        SandboxError(
                            f"sandbox helper is gone: {self._broken}", sandbox_id=self.sandbox_id
                        )
                    )


async def file_request(
    channel: HelperChannel, op: str, path: str, *, workdir: str, **fields: Any
) -> dict[str, Any]:
    """Send one workspace file operation (`read`, `write`, `list`) to the sandbox's helper.

    The one door every sandbox kind's file tools go through: the path is checked lexically
    here (`workspace_relative`), then the helper, inside the sandbox and as its user, opens
    it beneath the workspace's directory fd without following any symlink
    (`_inside_files.open_beneath`). Nothing on the host opens a workspace path, so a process in
    the sandbox that swaps a folder for a symlink cannot steer a host-side open.

    Raises:
        SandboxError: the path leaves the workspace, goes through a symlink, or the helper
            failed; FileNotFoundError: it does not exist.
    """
    relative = workspace_relative(path, workdir, sandbox_id=channel.sandbox_id)
    return await channel.request(op, wait_s=120.0, path=str(relative), **fields)


def decode_b64(text: str) -> bytes:
    """Bytes of a base64 field of a reply."""
    return base64.b64decode(text)


def encode_b64(data: bytes) -> str:
    """Base64 text for a request field."""
    return base64.b64encode(data).decode()


async def run_command(
    channel: HelperChannel,
    argv: list[str],
    *,
    timeout_s: float,
    env: dict[str, str],
    cwd: str,
    output_limit: int,
) -> ExecResult:
    """Run one command through the helper and build its ExecResult.

    Args:
        channel: the sandbox's helper channel.
        argv: the command's argv.
        timeout_s: seconds before the helper kills the command's process group.
        env: the command's full environment.
        cwd: working directory relative to the workspace (already checked lexically).
        output_limit: bytes kept per stream.

    Returns:
        The command's result; `duration_s` is host time from request to reply.

    Raises:
        SandboxError: the helper is gone or refused `cwd`.
    """
    started = time.perf_counter()
    reply = await channel.request(
        "exec",
        wait_s=timeout_s + 30.0,
        argv=argv,
        env=env,
        cwd=cwd,
        timeout=timeout_s,
        limit=output_limit,
    )
    duration = time.perf_counter() - started
    dropped_out = int(reply.get("dropped_out", 0))
    dropped_err = int(reply.get("dropped_err", 0))
    return ExecResult(
        exit_code=int(reply["code"]),
        stdout=render_output(decode_b64(reply["out"]), dropped_out),
        stderr=render_output(decode_b64(reply["err"]), dropped_err),
        duration_s=duration,
        timed_out=bool(reply.get("timed_out")),
        truncated=bool(dropped_out or dropped_err),
    )


def command_argv(command: str | Sequence[str]) -> list[str]:
    """Return the argv of a command: a string runs under `/bin/sh -c`."""
    if isinstance(command, str):
        return ["/bin/sh", "-c", command]
    argv = [str(part) for part in command]
    if not argv:
        raise ValueError("empty command")
    return argv
