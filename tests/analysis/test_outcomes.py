"""A run's outcome (`looplab.analysis.outcomes`): solved only with a verdict and no stop."""

from __future__ import annotations

import pytest

from looplab.analysis.outcomes import outcome_of
from looplab.traces.end_reason import EndReason


@pytest.mark.parametrize(
    ("end_reason", "success", "exit_code", "expected"),
    [
        (EndReason.FINISH, True, None, "solved"),
        (EndReason.FINISH, None, None, "unknown"),
        (EndReason.FINISH, False, None, "failed"),
        (EndReason.TIMEOUT, True, None, "failed"),
        (EndReason.EXIT, True, 3, "failed"),
        ("message_limit", True, None, "failed"),  # Inspect's own limits stop a run too
        ("working_limit", None, None, "failed"),
        ("exit_status", True, None, "solved"),  # a harness's other reason: by its verdict
    ],
)
def test_outcome_of_each_ending(
    end_reason: EndReason | str, success: bool | None, exit_code: int | None, expected: str
) -> None:
    """Stops (ours, or an imported harness's `<type>_limit`), a false verdict or a non-zero
    exit fail; a true verdict solves; no verdict is unknown, never solved."""
    assert outcome_of(end_reason, success, exit_code) == expected
