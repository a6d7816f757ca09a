"""`make test`'s runner (scripts/run-tests.sh), driven with a stand-in for pytest that
records its arguments and niceness: both groups always run, either failing fails the run,
and the timing group runs at nice -10 beside the rest only where raising priority is allowed
(and, unless TIMING_ORDER says, the machine is quiet)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "run-tests.sh"
FAKE = """#!/bin/sh
nice=$(awk '{print $19}' /proc/self/stat)
case "$*" in
  *"not timing"*) group=rest; code=${REST_EXIT:-0};;
  *) group=timing; code=${TIMING_EXIT:-0};;
esac
echo "$group nice=$nice args=$*" >> "$CALLS"
exit "$code"
"""


def _run(tmp_path: Path, **env: str) -> tuple[int, list[str]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    fake = tmp_path / "pytest"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    calls = tmp_path / "calls"
    done = subprocess.run(
        ["bash", str(SCRIPT), str(fake), "3"],
        env={**os.environ, "CALLS": str(calls), "TMPDIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, sorted(calls.read_text().splitlines()) if calls.exists() else []


def _may_raise_priority() -> bool:
    return subprocess.run(["nice", "-n", "-10", "true"], capture_output=True).returncode == 0


def test_both_groups_run_and_either_failure_fails_the_run(tmp_path: Path) -> None:
    """The rest on 3 workers without `timing`, the timing group without xdist; a failure in
    either (and only then) gives a non-zero exit, after both ran."""
    code, calls = _run(tmp_path)
    assert code == 0
    assert [c.split()[0] for c in calls] == ["rest", "timing"]
    assert "-n 3 -m not timing" in calls[0] and "-p no:xdist" in calls[1]
    for env in ({"REST_EXIT": "1"}, {"TIMING_EXIT": "1"}):
        code, calls = _run(tmp_path / next(iter(env)), **env)
        assert code == 1 and len(calls) == 2, (env, calls)


def test_timing_group_beside_the_rest_at_raised_priority_where_allowed(tmp_path: Path) -> None:
    """TIMING_ORDER=beside: where this user may renice, the timing group runs at nice -10
    beside the rest (whose niceness is untouched); =after runs it after, at the usual
    priority; another word is refused naming the variable."""
    own = os.nice(0)
    code, calls = _run(tmp_path / "beside", TIMING_ORDER="beside")
    assert code == 0
    rest, timing = calls
    assert f"nice={own}" in rest
    expected = max(own - 10, -20) if _may_raise_priority() else own
    assert f"nice={expected}" in timing
    code, calls = _run(tmp_path / "after", TIMING_ORDER="after")
    assert code == 0 and all(f"nice={own}" in c for c in calls)
    code, calls = _run(tmp_path / "bad", TIMING_ORDER="sideways")
    assert code == 2 and calls == []


def test_a_busy_machine_runs_the_timing_group_after_the_rest(tmp_path: Path) -> None:
    """TIMING_ORDER=auto (the default) beside a process that keeps a core busy: the timing
    group runs after the rest, at the usual priority (sessions' shares cannot be reniced)."""
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        code, calls = _run(tmp_path)
    finally:
        busy.kill()
        busy.wait()
    own = os.nice(0)
    assert code == 0 and all(f"nice={own}" in c for c in calls), calls
