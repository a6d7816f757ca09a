"""Shared fixtures of the trace tests: real files other harnesses wrote (tests/fixtures/)."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
"""tests/fixtures: copies of public runs, one row each in PROVENANCE.md."""


@pytest.fixture
def external() -> Path:
    """The external-traces fixture directory (mini-swe-agent, OpenHands, Inspect, TraceLab)."""
    return FIXTURES / "external-traces"


@pytest.fixture
def fixtures() -> Path:
    """tests/fixtures (external-traces/ and corpus/ raw originals)."""
    return FIXTURES
