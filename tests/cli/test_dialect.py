"""One CLI dialect: same flag, same meaning; one exit-code policy; `-o -`; --version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from looplab.cli.app import app

LEGACY = {"--out", "--config-override", "--preset", "--profile-override", "-c"}
"""Flags of earlier dialects that must not come back."""


def _commands() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    def walk(group: Any, prefix: str) -> None:
        for name, command in group.commands.items():
            path = f"{prefix} {name}".strip()
            if hasattr(command, "commands"):
                walk(command, path)
            else:
                found.append((path, command))

    walk(typer.main.get_command(app), "")
    return found


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "LOOPLAB_LOG_FILE": os.devnull}
    return subprocess.run(
        [sys.executable, "-m", "looplab", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
        check=False,
    )


def test_same_flag_same_meaning_everywhere() -> None:
    """Every flag string maps to one parameter name across all commands; no legacy flags."""
    meaning: dict[str, set[str]] = {}
    legacy: list[str] = []
    for path, command in _commands():
        for param in command.params:
            for flag in [*param.opts, *param.secondary_opts]:
                if not flag.startswith("-"):
                    continue
                meaning.setdefault(flag, set()).add(str(param.name))
                if flag in LEGACY:
                    legacy.append(f"{path}: {flag}")
    mixed = {flag: names for flag, names in meaning.items() if len(names) > 1}
    assert mixed == {}
    assert legacy == []
    assert meaning.get("-o") == {"output"} and meaning.get("-p") == {"profile"}
    assert meaning.get("-s") == {"set_"}


def test_every_parameter_has_help() -> None:
    """Every option and argument of every command carries help text."""
    missing = [
        f"{path}: {param.name}"
        for path, command in _commands()
        for param in command.params
        if not getattr(param, "help", None) and param.name != "help"
    ]
    assert missing == []


def test_version() -> None:
    """`looplab --version` prints the package version and exits 0."""
    result = _run("--version")
    assert result.returncode == 0 and result.stdout.startswith("looplab 0.")


@pytest.mark.parametrize(
    "args",
    [
        ["sweep", "{empty}"],
        ["replay", "{empty}"],
        ["report", "{empty}"],
        ["export", "otel", "{empty}", "-o", "-"],
        ["sweep", "{missing}"],
    ],
)
def test_empty_or_missing_input_is_exit_2(args: list[str], tmp_path: Path) -> None:
    """A directory without traces (or no path at all) is the same input error everywhere."""
    (tmp_path / "empty").mkdir()
    paths = {"{empty}": str(tmp_path / "empty"), "{missing}": str(tmp_path / "nope")}
    result = _run(*[paths.get(a, a) for a in args])
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error:") and "Traceback" not in result.stderr


def test_usage_error_is_exit_2() -> None:
    """An unknown command or option exits 2 with a usage message."""
    assert _run("frobnicate").returncode == 2
    assert _run("sweep", "--no-such-flag", "x").returncode == 2


def test_dash_output_streams_to_stdout(tmp_path: Path) -> None:
    """`-o -` writes the stream to stdout and creates no file named `-`."""
    result = _run("schema", "-o", "-", cwd=tmp_path)
    assert result.returncode == 0
    assert json.loads(result.stdout)["$schema"].startswith("https://json-schema.org/")
    assert not (tmp_path / "-").exists()


def test_bad_task_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """`looplab run` validates tasks and profiles before creating its output directory."""
    config = tmp_path / "bad.yaml"
    out = tmp_path / "out"
    config.write_text(
        f"name: bad\noutput_dir: {out}\nbackends: [{{name: fast-750}}]\ntasks: [coding/nope]\n"
    )
    result = _run("run", str(config))
    assert result.returncode == 2, result.stderr
    assert "coding/nope" in result.stderr
    assert not out.exists()


def test_output_to_a_device_or_fifo_is_written_in_place(tmp_path: Path) -> None:
    """`-o /dev/null` (or a FIFO) is written, never replaced by a renamed file: as root the
    atomic rename turned /dev/null into a regular file for the whole machine."""
    import os
    import stat
    import threading

    from looplab.console import write_output

    if os.geteuid() == 0:  # a null device of the test's own, so a regression breaks no other
        null = tmp_path / "null"
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        assert write_output(null, "[]\n")
        assert stat.S_ISCHR(os.stat(null).st_mode)
        assert not list(tmp_path.glob(".*partial"))
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    write_output(fifo, "rows\n")
    reader.join(10)
    assert got == ["rows\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
