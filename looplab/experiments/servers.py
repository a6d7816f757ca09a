"""Simulated backends of an experiment: profiles resolved per cell, servers shared by cells.

One `SimulatorServer` per (backend, resolved profile, clock, transport) serves every cell
of that key (a cell's seed, the experiment seed + its repetition, is a profile field); the pool
starts servers on first use and stops them all at the end. A real backend needs no
server: its endpoint is the config's. Overrides travel as typed values from the config
to the profile (`resolve_profile(values=...)`), never as `key=value` strings.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import structlog

from looplab.backends.client.client import EndpointConfig
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.backends.simulator.lateness import behind_schedule_words
from looplab.clock import VirtualClock
from looplab.experiments.config import BackendSpec
from looplab.experiments.matrix import Cell
from looplab.experiments.workload import WORKLOAD_MODEL
from looplab.latency.profile import LatencyProfile
from looplab.tasks.references import is_trace_driven

__all__ = ["ServerPool"]

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class ServerKey:
    """What makes two cells share a simulator server."""

    backend: str
    profile: LatencyProfile
    """The resolved profile (overrides and seed applied), compared by value."""
    virtual: bool
    transport: str = "http"
    """Each transport its own server: cells of one never warm the other's prefix cache."""

    def __hash__(self) -> int:
        return hash((self.backend, self.profile.model_dump_json(), self.virtual, self.transport))


class ServerPool:
    """Simulator servers keyed by (backend name, resolved profile, clock, transport):
    backends of one name that differ in a profile field (an axis), seed or transport get
    their own server.

    Args:
        virtual: serve on a `VirtualClock` (each server its own) instead of wall time.
    """

    def __init__(self, *, virtual: bool) -> None:
        self.virtual = virtual
        self._servers: dict[ServerKey, SimulatorServer] = {}
        self._lock = asyncio.Lock()

    async def server(
        self, backend: BackendSpec, seed: int, *, virtual: bool | None = None
    ) -> SimulatorServer:
        """The running server of (backend, seed, clock), started on first use (`virtual`:
        None for the pool's clock)."""
        virtual = self.virtual if virtual is None else virtual
        profile = backend.latency_profile(seed)
        assert profile is not None, "a real backend has no simulator"
        key = ServerKey(backend.name, profile, virtual, backend.transport)
        async with self._lock:
            if key not in self._servers:
                server = SimulatorServer(profile, clock=VirtualClock() if virtual else None)
                server.simulator.lateness.log_bursts = False  # one summary at `stop`
                await asyncio.to_thread(server.start)
                self._servers[key] = server
            return self._servers[key]

    async def endpoint(
        self, cell: Cell, *, virtual: bool | None = None
    ) -> tuple[EndpointConfig, SimulatorServer | None]:
        """Where the cell's agent talks to: the real endpoint, or its simulator's (on the
        virtual clock or not: `virtual`, None for the pool's)."""
        backend = cell.backend
        if backend.kind == "real":
            assert backend.base_url is not None
            assert backend.model is not None
            endpoint = EndpointConfig(
                base_url=backend.base_url,
                model=backend.model,
                api_key_env=backend.api_key_env,
                transport=backend.transport,
            )
            return endpoint, None
        server = await self.server(backend, cell.seed, virtual=virtual)
        model = WORKLOAD_MODEL if is_trace_driven(cell.task) else f"looplab-{backend.policy}"
        endpoint = EndpointConfig(
            base_url=server.base_url, model=model, transport=backend.transport
        )
        return endpoint, server

    async def stop(self) -> None:
        """Stop every server (idempotent), then log one line on any release that fell
        behind schedule, and what it means (`behind_schedule_words`)."""
        servers, self._servers = list(self._servers.values()), {}
        words = behind_schedule_words([s.simulator.lateness for s in servers])
        if words is not None:
            log.warning("simulator.behind_schedule", summary=words)
        for server in servers:
            await asyncio.to_thread(server.stop)
