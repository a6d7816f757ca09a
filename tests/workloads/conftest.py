"""Fixtures of the workload tests: the traces in tests/fixtures/workloads (see PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "workloads"


@pytest.fixture
def fixtures() -> Path:
    """tests/fixtures/workloads."""
    return FIXTURES
