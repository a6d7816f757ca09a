"""The marks `make test` schedules by (tests/conftest.py), read off this session's items."""

from __future__ import annotations

import pytest

from tests.conftest import INTEGRATION_TIMEOUT_S


def _timeout(item: pytest.Item) -> float | None:
    marker = item.get_closest_marker("timeout")
    return None if marker is None else float(marker.args[0])


def test_integration_tests_get_the_longer_hang_guard(request: pytest.FixtureRequest) -> None:
    """An `integration` test without its own timeout mark gets INTEGRATION_TIMEOUT_S; one with
    its own keeps it; a pure test keeps pyproject's 120 s (no mark)."""
    items = {item.nodeid: item for item in request.session.items}
    integration = [i for i in items.values() if i.get_closest_marker("integration")]
    if not integration:
        pytest.skip("reads the marks of the whole collected suite (make test collects it)")
    byo = "tests/report/test_byo_bottom_lines.py::test_each_agent_gets_its_own_bottom_line"
    if byo in items:
        assert _timeout(items[byo]) == 300  # its own mark wins
    for item in integration:
        assert (_timeout(item) or 0) >= 300, item.nodeid
    guarded = [i for i in integration if _timeout(i) == INTEGRATION_TIMEOUT_S]
    assert len(guarded) >= len(integration) - 5
    assert _timeout(request.node) is None and not request.node.get_closest_marker("integration")


def test_pacing_tests_run_in_the_serial_timing_group(request: pytest.FixtureRequest) -> None:
    """Wall-clock pacing asserts carry `timing` (run serially by `make test`), by directory
    or file prefix, and nothing in tests/reliability is left without `reliability`."""
    for item in request.session.items:
        if item.nodeid.startswith("tests/backends/simulator/test_pacing.py::"):
            assert item.get_closest_marker("timing"), item.nodeid
        if item.nodeid.startswith("tests/reliability/"):
            assert item.get_closest_marker("reliability"), item.nodeid
