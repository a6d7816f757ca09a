"""CLI errors name the flag or file:line that caused them, offer "did you mean", and every
command applies one rule to where its output goes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from looplab.bench.synthetic import write_synthetic_experiment

GOOD = "name: g\nbackends: [{name: fast-750}]\ntasks: [coding/fix-pager]\n"


def _looplab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "looplab", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, "LOOPLAB_LOG_FILE": os.devnull, "COLUMNS": "300"},
        check=False,
    )


def _refused(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    said = " ".join(result.stderr.split())  # the console wraps long paths at its width
    for needle in needles:
        assert needle in said, (needle, result.stderr[-2000:])


def test_overrides_and_flags_are_blamed_not_the_file(tmp_path: Path) -> None:
    """A bad -s names -s and the override, a bad --executor names --executor; neither
    blames a line of the (good) file."""
    (tmp_path / "good.yaml").write_text(GOOD)
    no_equals = _looplab("run", "good.yaml", "-s", "repetitions", cwd=tmp_path)
    _refused(no_equals, "field '-s/--set'", "e.g. -s repetitions=3")
    bad_value = _looplab("run", "good.yaml", "-s", "concurrency=lots", cwd=tmp_path)
    _refused(bad_value, "-s concurrency=lots, field 'concurrency'")
    assert "line " not in bad_value.stderr and "good.yaml" not in bad_value.stderr
    executor = _looplab("run", "good.yaml", "--executor", "rey", cwd=tmp_path)
    _refused(executor, "field '--executor'", "did you mean 'ray'?")
    assert "good.yaml" not in executor.stderr


def test_unknown_keys_tasks_profiles_and_commands_get_did_you_mean(tmp_path: Path) -> None:
    """A misspelt key names its line; an unknown task or profile its file:line; each, and a
    misspelt command, gets the closest allowed name."""
    (tmp_path / "key.yaml").write_text(GOOD + "concurency: 2\n")
    _refused(
        _looplab("run", "key.yaml", cwd=tmp_path),
        "line 4, field 'concurency'",
        "did you mean 'concurrency'?",
    )
    (tmp_path / "task.yaml").write_text(
        "name: g\nbackends: [{name: fast-750}]\ntasks:\n  - coding/fix-pager\n  - coding/fix-pagr\n"
    )
    _refused(
        _looplab("run", "task.yaml", cwd=tmp_path),
        "task.yaml:5: field 'task'",
        "did you mean 'coding/fix-pager'?",
    )
    (tmp_path / "profile.yaml").write_text(
        "name: g\nbackends:\n  - {name: b, profile: fast-75}\ntasks: [coding/fix-pager]\n"
    )
    _refused(
        _looplab("run", "profile.yaml", cwd=tmp_path),
        "profile.yaml:3: field 'profile'",
        "did you mean 'fast-750'?",
    )
    _refused(_looplab("rn", cwd=tmp_path), "Did you mean 'run'?")
    assert not (tmp_path / "runs").exists()


def test_one_rule_for_output_paths(tmp_path: Path) -> None:
    """A missing parent directory is refused (not created) outside looplab's own folders;
    wrap and replay refuse a directory holding anything but traces, and add to one that
    holds only traces."""
    missing = tmp_path / "missing" / "dir" / "x.json"
    _refused(
        _looplab("schema", "-o", str(missing), cwd=tmp_path), "field '--output'", "does not exist"
    )
    assert not (tmp_path / "missing").exists()
    assert _looplab("schema", "-o", "runs/schema.json", cwd=tmp_path).returncode == 0
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    _refused(
        _looplab("wrap", "-o", str(busy), "--", "true", cwd=tmp_path),
        "field '--output'",
        "notes.txt",
    )
    experiment = write_synthetic_experiment(tmp_path / "syn", 2)
    _refused(
        _looplab("replay", str(experiment), "-p", "fast-750", "-o", str(busy), cwd=tmp_path),
        "field '--output'",
    )
    traces = tmp_path / "traces"
    for _ in range(2):  # a second replay adds its traces beside the first's
        done = _looplab(
            "replay", str(experiment), "-p", "fast-750", "-o", str(traces), cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr[-2000:]
    assert len(list(traces.glob("*.jsonl"))) >= 2
