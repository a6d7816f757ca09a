"""`looplab bench scale`: the executors' throughput on this machine (`looplab.bench.scale`)."""

from __future__ import annotations

__all__ = []
