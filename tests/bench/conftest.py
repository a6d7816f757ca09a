"""Fixtures: the fast loopback simulator of tests/backends/conftest.py, for the load
generator's tests (one definition, shared rather than copied)."""

from __future__ import annotations

from tests.backends.conftest import fast_server

__all__ = ["fast_server"]
