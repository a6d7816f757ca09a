"""Three ways to run the simulator from Python.

- `SimulatorServer`: real HTTP on 127.0.0.1 with an ephemeral port, served by uvicorn on
  its own thread and event loop (so the caller's loop, sync or async, never disturbs the
  pacing). A context manager; `base_url` is ready for `openai.AsyncOpenAI(base_url=...)`.
- `simulator_transport`: an `httpx2` ASGI transport (openai>=3's HTTP library) for the
  fastest tests (no sockets). It buffers the whole body, so pair it with a `VirtualClock` and
  check content there; timing tests use real HTTP.
- `looplab serve` (the CLI) for any other client.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from types import TracebackType

import httpx2
import uvicorn

from looplab.backends.profile import LatencyProfile
from looplab.backends.server import create_app
from looplab.backends.simulator import Simulator
from looplab.clock import Clock
from looplab.errors import BackendError

__all__ = ["SimulatorServer", "simulator_transport", "uvicorn_config"]


def uvicorn_config(simulator: Simulator, *, host: str, port: int) -> uvicorn.Config:
    """The uvicorn settings looplab serves with: asyncio loop, httptools, no access log.

    The stock asyncio loop is used on purpose: its timers never fire early, which the
    pacer relies on (libuv-based loops round timers to whole milliseconds both ways).
    """
    return uvicorn.Config(
        create_app(simulator),
        host=host,
        port=port,
        loop="asyncio",
        http="httptools",
        lifespan="off",
        access_log=False,
        log_level="warning",
        timeout_keep_alive=30,
        backlog=4096,
    )


class SimulatorServer:
    """The simulator on real loopback HTTP, in a background thread.

    Args:
        profile: latency profile to serve.
        pacer: `schedule` or `naive`.
        clock: defaults to a `WallClock`.
        host: interface to bind; loopback by default.
        port: 0 picks a free ephemeral port.
    """

    def __init__(
        self,
        profile: LatencyProfile,
        *,
        pacer: str = "schedule",
        clock: Clock | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.simulator = Simulator(profile, clock=clock, pacer=pacer)
        self._host = host
        self._port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    @property
    def port(self) -> int:
        """The bound port (valid after `start()`)."""
        if self._socket is None:
            raise BackendError("simulator server is not started")
        return int(self._socket.getsockname()[1])

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`, for OpenAI clients."""
        return f"http://{self._host}:{self.port}/v1"

    def start(self, timeout_s: float = 10.0) -> SimulatorServer:
        """Bind, start serving in a thread, and return once requests are accepted.

        Raises:
            BackendError: when the server does not come up within `timeout_s`.
        """
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._host, self._port))
        sock.set_inheritable(True)
        self._socket = sock
        server = uvicorn.Server(uvicorn_config(self.simulator, host=self._host, port=self.port))
        self._server = server
        self._thread = threading.Thread(
            target=lambda: asyncio.run(server.serve(sockets=[sock])),
            name=f"looplab-simulator-{self.port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.perf_counter() + timeout_s
        while not server.started:
            if time.perf_counter() > deadline or not self._thread.is_alive():
                self.stop()
                raise BackendError(f"simulator server did not start within {timeout_s} s")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving and join the thread; idempotent."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = None
        self._thread = None

    def __enter__(self) -> SimulatorServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> SimulatorServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)


def simulator_transport(simulator: Simulator) -> httpx2.AsyncBaseTransport:
    """An httpx transport that calls the simulator's ASGI app in-process.

    Use with `openai.AsyncOpenAI(http_client=httpx2.AsyncClient(transport=...))` and a base
    URL such as `http://looplab.local/v1`.
    """
    return httpx2.ASGITransport(app=create_app(simulator))
