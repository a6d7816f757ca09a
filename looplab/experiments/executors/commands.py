"""`looplab bench scale`: the executors' throughput on this machine (`executors.bench`)."""

from __future__ import annotations

__all__ = []
