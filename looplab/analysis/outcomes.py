"""A run's outcome: solved, failed or unknown, in one place.

Every figure that counts finished or solved runs reads a run's outcome here, so no view
can count a failed run as finished or an unknown one as solved:

- `failed`: the run stopped (`STOP_REASONS`: a time cap, a limit, a backend or harness
  error; or an imported harness's `<type>_limit`), or its command exited non-zero
  (`run_end.exit_code`, a wrapped agent), or its verdict said so (`success` False: the
  task's check, `wrap --check`, a span, the harness's own record);
- `solved`: its verdict said so (`success` True) and it did not fail as above;
- `unknown`: no verdict (`success` None): an imported session without a harness verdict,
  a collected run without a success attribute. Unknown is said, never counted as solved.

`RunEndEvent.verdict_by` says who decided, one of `VERDICT_SOURCES`: `check` (the task's
checker, `looplab run`), `check command` (`looplab wrap --check CMD`), `exit code` (a
wrapped agent's exit status, without `--check`), `span` (a collected run's
`looplab.success` attribute or its agent span's status), `harness` (an imported record's
own verdict: a resolved flag, a score, a browser agent's `is_done`/`success`). The report
names it per arm.
"""

from __future__ import annotations

from typing import Literal

from looplab.traces.end_reason import HARNESS_LIMIT_SUFFIX, EndReason
from looplab.traces.schema import RunEndEvent

__all__ = ["STOP_REASONS", "VERDICT_SOURCES", "Outcome", "outcome", "outcome_of", "stopped"]

Outcome = Literal["solved", "failed", "unknown"]

VERDICT_SOURCES = ("check", "check command", "exit code", "span", "harness")
"""Who may decide a run's `success` (`RunEndEvent.verdict_by`; module doc)."""

STOP_REASONS = frozenset(
    {
        EndReason.TIMEOUT,
        EndReason.STEP_LIMIT,
        EndReason.TOKEN_BUDGET,
        EndReason.WALL_TIME_BUDGET,
        EndReason.BACKEND_ERROR,
        EndReason.ERROR,
        EndReason.CANCELLED,
    }
)
"""End reasons of runs that did not finish their task."""


def stopped(end_reason: EndReason | str) -> bool:
    """True for an end reason of a run that did not finish: one of `STOP_REASONS`, or an
    imported harness's own limit (`traces.end_reason.harness_limit`: Inspect's)."""
    return end_reason in STOP_REASONS or str(end_reason).endswith(HARNESS_LIMIT_SUFFIX)


def outcome_of(
    end_reason: EndReason | str, success: bool | None, exit_code: int | None = None
) -> Outcome:
    """The outcome of a run that ended for `end_reason` with verdict `success` and (for a
    command) `exit_code` (module doc)."""
    if stopped(end_reason) or success is False or exit_code not in (None, 0):
        return "failed"
    return "solved" if success else "unknown"


def outcome(end: RunEndEvent | None) -> Outcome:
    """The outcome of a run by its `run_end` (None: cut off, so failed)."""
    if end is None:
        return "failed"
    return outcome_of(end.end_reason, end.success, end.exit_code)
