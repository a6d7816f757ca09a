"""A wrapped run's verdict (`looplab wrap`): did the agent solve its task?

Two sources, the stronger wins:

- `--check CMD` (a shell command run after the agent exits, in its working directory
  and environment, without the proxy): exit 0 = solved, anything else = failed. Its
  output (cut to `CHECK_OUTPUT_CHARS`) goes into the trace's `run_end.check_output`;
  `verdict_by` is `check command`. An agent that exited non-zero failed whatever the
  check says (it crashed or gave up; the check may pass on what was there before).
- without a check, the agent's exit code: 0 = solved, else failed; `verdict_by` is
  `exit code`. An agent that exits 0 on failure needs `--check` to be judged.

The check's own time is not task time (the run ended when the agent exited).
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CHECK_OUTPUT_CHARS", "CHECK_TIMEOUT_S", "WrapVerdict", "judge"]

CHECK_OUTPUT_CHARS = 4000
"""The last this many characters of the check's output are kept in the trace."""
CHECK_TIMEOUT_S = 600.0
"""A check still running after this long is killed and counts as failed."""


@dataclass(frozen=True)
class WrapVerdict:
    """Solved or not, who decided (`exit code`, `check command`), what the check printed."""

    success: bool
    by: str
    output: str | None = None


def judge(
    exit_code: int,
    check: str | None,
    *,
    cwd: Path | None,
    env: Mapping[str, str],
    timeout_s: float = CHECK_TIMEOUT_S,
) -> WrapVerdict:
    """The verdict of a wrapped run whose agent exited with `exit_code` (module doc).

    Args:
        exit_code: the agent's exit status (128 + N for signal N).
        check: the shell command that judges the task (None: the exit code decides).
        cwd: the check's working directory (the agent's).
        env: its environment.
        timeout_s: the check's time limit.
    """
    if check is None:
        return WrapVerdict(exit_code == 0, "exit code")
    try:
        done = subprocess.run(
            ["/bin/sh", "-c", check],
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
        )
        passed, said = done.returncode == 0, (done.stdout or "") + (done.stderr or "")
        said += f"\n[check exited with status {done.returncode}]"
    except subprocess.TimeoutExpired:
        passed, said = False, f"[check still running after {timeout_s:g} s: killed]"
    if exit_code != 0:
        said += f"\n[the agent exited with status {exit_code}: failed whatever the check says]"
    return WrapVerdict(passed and exit_code == 0, "check command", said[-CHECK_OUTPUT_CHARS:])
