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

import httpx2

from looplab.backends.simulator.model import Simulator
from looplab.backends.simulator.server import create_app
from looplab.clock import Clock
from looplab.latency.profile import LatencyProfile
from looplab.serving.appserver import AppServer

__all__ = ["SimulatorServer", "simulator_transport"]


class SimulatorServer(AppServer):
    """The simulator on real loopback HTTP, in a background thread.

    Args:
        profile: latency profile to serve.
        pacer: `schedule` or `naive`.
        clock: defaults to a `WallClock`.
        host: interface to bind; loopback by default.
        port: 0 picks a free ephemeral port.
        fallback: the policy answering model names it does not serve (`Simulator`).
    """

    def __init__(
        self,
        profile: LatencyProfile,
        *,
        pacer: str = "schedule",
        clock: Clock | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        fallback: str | None = None,
    ) -> None:
        self.simulator = Simulator(profile, clock=clock, pacer=pacer, fallback=fallback)
        super().__init__(create_app(self.simulator), host=host, port=port, name="looplab-simulator")


def simulator_transport(simulator: Simulator) -> httpx2.AsyncBaseTransport:
    """An httpx transport that calls the simulator's ASGI app in-process.

    Use with `openai.AsyncOpenAI(http_client=httpx2.AsyncClient(transport=...))` and a base
    URL such as `http://looplab.local/v1`.
    """
    return httpx2.ASGITransport(app=create_app(simulator))
