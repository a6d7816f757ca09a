"""One containment rule at every door: `looplab replay --mode live` without bubblewrap.

A crafted trace whose first recorded reply is a `run_shell` writing a marker file outside
the workspace. Real `looplab replay` processes with bubblewrap hidden from PATH: refused
(exit non-zero, the fix named, no marker) unless `--sandbox-isolation none` opts in,
which runs it and prints the WARNING line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.reliability]

_LIVE = [sys.executable, "-m", "looplab", "replay", "--mode", "live"]
FIXTURE = Path(__file__).parents[1] / "fixtures" / "replay" / "fix-pager-scripted.jsonl"


def _path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with every program of /usr/bin and /bin but bubblewrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in (Path("/usr/bin"), Path("/bin")):
        for program in folder.iterdir():
            link = bin_dir / program.name
            if program.name != "bwrap" and not link.exists():
                link.symlink_to(program)
    return f"{Path(sys.executable).parent}:{bin_dir}"


def _crafted_trace(tmp_path: Path, marker: Path) -> Path:
    """The fixture with its first model reply replaced by `echo pwned > MARKER`."""
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        event = json.loads(line)
        if event.get("kind") == "model_call" and (event.get("message") or {}).get("tool_calls"):
            call = {"command": f"echo pwned > {marker}"}
            event["message"]["tool_calls"] = [
                {
                    "id": "call_pwn",
                    "type": "function",
                    "function": {"name": "run_shell", "arguments": json.dumps(call)},
                }
            ]
            lines[index] = json.dumps(event)
            break
    else:
        raise AssertionError("the fixture has no model call with tool calls")
    trace = tmp_path / "crafted.jsonl"
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return trace


def _replay(tmp_path: Path, trace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`looplab replay --mode live` of `trace` with bubblewrap hidden from PATH."""
    env = {
        **os.environ,
        "PATH": _path_without_bwrap(tmp_path),
        "LOOPLAB_LOG_FILE": os.devnull,
        "COLUMNS": "300",
    }
    done = subprocess.run(
        [*_LIVE, str(trace), "-o", str(tmp_path / "out"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    done.stderr = " ".join(done.stderr.split())  # as one line (the console wraps)
    return done


def test_live_replay_without_bubblewrap_is_refused(tmp_path: Path) -> None:
    """Without bwrap live replay exits non-zero naming the fix; the recorded command never runs."""
    marker = tmp_path / "MARKER"
    done = _replay(tmp_path, _crafted_trace(tmp_path, marker))
    assert done.returncode != 0
    assert "no bubblewrap on PATH" in done.stderr, done.stderr
    assert "--sandbox-isolation none" in done.stderr
    assert "Traceback" not in done.stderr
    assert not marker.exists()


def test_live_replay_opt_in_runs_with_the_warning(tmp_path: Path) -> None:
    """`--sandbox-isolation none` runs the recorded command on the host and says so."""
    marker = tmp_path / "MARKER"
    done = _replay(tmp_path, _crafted_trace(tmp_path, marker), "--sandbox-isolation", "none")
    assert done.returncode == 0, done.stderr
    assert "WARNING: local sandbox NOT CONTAINED (sandbox.isolation is none)" in done.stderr
    assert marker.read_text().strip() == "pwned"
