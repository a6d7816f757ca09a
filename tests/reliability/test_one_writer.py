"""One writer per experiment directory, and output paths that cannot be one.

Two real `looplab run` processes on one directory: the second is refused (exit 2, the
holder named) while the first lives, and takes the lock over once the first is killed
with SIGKILL. `output_dir` naming a device, a regular file, /proc or /sys gives exit 2
and one sentence naming the field, never a traceback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from looplab.cli.main import main
from looplab.experiments.guards.lock import LOCK_NAME, hold_directory

pytestmark = [pytest.mark.reliability]


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "exp.yaml"
    config = {
        "name": "writers",
        "clock": "virtual",
        "backends": [{"name": "fast", "profile": "fast-750"}],
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "exp"),
        "budgets": {"max_steps": 1},
    }
    path.write_text(yaml.safe_dump(config))
    return path


def _looplab(config: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "looplab", "run", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LOOPLAB_LOG_FILE": os.devnull, "COLUMNS": "300"},
    )


def _lock_pid(directory: Path) -> int | None:
    try:
        return int(json.loads((directory / LOCK_NAME).read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def test_second_writer_refused_then_stale_lock_taken_over(tmp_path: Path, campaign: Any) -> None:
    """A live run's directory refuses a second run naming its pid; once killed, it is taken over."""
    config = _config(tmp_path)
    directory = tmp_path / "exp"
    first = _looplab(config)
    try:
        deadline = time.perf_counter() + 60
        while _lock_pid(directory) != first.pid and time.perf_counter() < deadline:
            assert first.poll() is None, first.communicate()[1]
            time.sleep(0.05)
        assert _lock_pid(directory) == first.pid
        first.send_signal(signal.SIGSTOP)  # still alive, still holding the lock
        second = subprocess.run(
            [sys.executable, "-m", "looplab", "run", str(config)],
            capture_output=True,
            text=True,
            env={**os.environ, "LOOPLAB_LOG_FILE": os.devnull, "COLUMNS": "300"},
            timeout=120,
        )
        said = " ".join(second.stderr.split())  # as one line (the console wraps)
        assert second.returncode == 2, said
        assert f"being written by another looplab run (pid {first.pid} on host" in said
        assert "Traceback" not in said
    finally:
        first.kill()
        first.communicate()
        campaign.add("kills")
    assert _lock_pid(directory) == first.pid  # the dead owner's record is still there
    third = _looplab(config)
    _, err = third.communicate(timeout=180)
    assert third.returncode == 0, err
    assert "being written" not in err
    traces = list((directory / "traces").glob("*.jsonl"))
    assert len(traces) == 1
    campaign.add("second writers refused")


def test_lock_is_reentrant_in_one_process_and_exclusive_across(tmp_path: Path) -> None:
    """The lock nests within one process and is free again once its holder lets go."""
    directory = tmp_path / "exp"
    with hold_directory(directory), hold_directory(directory):
        assert _lock_pid(directory) == os.getpid()
        probe = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path; "
                "from looplab.experiments.guards.lock import hold_directory\n"
                "try:\n    hold_directory(Path(sys.argv[1])).__enter__()\n"
                "except Exception as exc:\n    print(exc)",
                str(directory),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert f"pid {os.getpid()} on host" in probe.stdout
    with hold_directory(directory):
        assert _lock_pid(directory) == os.getpid()


@pytest.mark.parametrize(
    "where", ["/dev/null", "file", "/proc/self", "/proc/1/fdinfo", "/sys/kernel"]
)
def test_output_dir_that_cannot_be_a_directory(
    tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-s output_dir=` a device, a file, /proc or /sys: exit 2 and a sentence naming the field."""
    if where == "file":
        where = str(tmp_path / "plain")
        Path(where).write_text("x")
    with pytest.raises(SystemExit) as stop:
        main(["run", str(_config(tmp_path)), "-s", f"output_dir={where}"])
    err = " ".join(capsys.readouterr().err.split())
    assert stop.value.code == 2, err
    assert "field 'output_dir'" in err
    assert "cannot hold an experiment" in err
    assert "Traceback" not in err
