"""Shared fixtures of the trace tests: the external traces other harnesses wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

EXTERNAL = Path(__file__).parents[2].parent / "shared" / "fixtures" / "external-traces"
"""/work/shared/fixtures/external-traces locally; CI keeps a read-only shared/ beside the clone."""


@pytest.fixture
def external() -> Path:
    """The external-traces fixture directory (skips when shared/ is not beside the repo)."""
    if not (EXTERNAL / "PROVENANCE.md").is_file():
        pytest.skip(f"external trace fixtures not found at {EXTERNAL} (shared/ not checked out)")
    return EXTERNAL
