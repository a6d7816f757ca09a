"""The one CLI dialect: option types every command shares, consoles, output helpers.

Same flag, same meaning, in every command (tests/cli/test_dialect.py walks the CLI):

| flag | meaning |
|---|---|
| `-o/--output PATH` | where the command writes its result (`-` = stdout for a stream) |
| `-p/--profile NAME` | a latency preset name or a profile YAML file |
| `--profile-set FIELD=VALUE` | override one latency-profile field (repeatable) |
| `-s/--set KEY.PATH=VALUE` | override one config field (repeatable) |
| `--seed N` | the seed of every random draw |
| `--host H` / `--port N` | where a server binds (127.0.0.1 by default) |
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer
from rich.console import Console

from looplab.errors import ConfigError

__all__ = [
    "OWN_FOLDERS",
    "DrainOpt",
    "HostOpt",
    "OutputOpt",
    "PortOpt",
    "ProfileOpt",
    "ProfileSetOpt",
    "SetOpt",
    "ensure_parent",
    "err_console",
    "out_console",
    "parse_numbers",
    "prepare_output_dir",
    "write_output",
]

OutputOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Where to write the result.", show_default=False),
]
ProfileOpt = Annotated[
    str, typer.Option("--profile", "-p", help="Latency preset name or profile YAML file.")
]
ProfileSetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--profile-set",
        help="Override a latency-profile field: --profile-set decode_tps=500 (repeatable).",
        show_default=False,
    ),
]
DrainOpt = Annotated[
    float,
    typer.Option(
        "--drain-s",
        min=0.0,
        help="On SIGTERM/SIGINT: let in-flight requests and streams finish for at most "
        "this many seconds, then close them and exit.",
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        help="Override a config field before validation: -s concurrency=2 (repeatable).",
        show_default=False,
    ),
]
HostOpt = Annotated[str, typer.Option("--host", help="Interface to bind.")]
PortOpt = Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0 = any free).")]


def out_console() -> Console:
    """A console on stdout, 120 columns when not a terminal (logs, CI)."""
    return Console(width=None if sys.stdout.isatty() else 120)


def err_console() -> Console:
    """A console on stderr for progress and errors."""
    return Console(stderr=True, width=None if sys.stderr.isatty() else 120)


def parse_numbers(
    text: str, flag: str, kind: type[float] | type[int], *, allow_zero: bool = False
) -> list[Any]:
    """`"80,750"` -> `[80.0, 750.0]`.

    Raises:
        ConfigError: not a comma-separated list of positive numbers (non-negative with
            `allow_zero`), naming `flag`.
    """
    try:
        values = [kind(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(
            f"{text!r} is not a comma-separated list of numbers", field=flag
        ) from None
    if allow_zero and values and min(values) >= 0:
        return values
    if not values or min(values) <= 0:
        what = "non-negative" if allow_zero else "positive"
        raise ConfigError(f"give at least one {what} number, none negative", field=flag)
    return values


OWN_FOLDERS = ("runs", "bench-results")
"""The folders looplab creates by itself (its defaults live there); any other missing
parent of an output is refused, so a typo never creates directories elsewhere."""


def ensure_parent(path: Path, flag: str) -> None:
    """The one rule for where outputs go: an output's parent directory must exist, except
    under `OWN_FOLDERS` (relative to the working directory), which are created.

    Raises:
        ConfigError: the parent is missing (or not a directory), naming `flag`.
    """
    parent = path.parent
    if parent.is_dir():
        return
    if not path.is_absolute() and path.parts[:1] and path.parts[0] in OWN_FOLDERS:
        parent.mkdir(parents=True, exist_ok=True)
        return
    problem = "is not a directory" if parent.exists() else "does not exist"
    raise ConfigError(
        f"{parent} {problem}: create it first (looplab creates only its own "
        f"{' and '.join(f'{f}/' for f in OWN_FOLDERS)} folders)",
        field=flag,
    )


def prepare_output_dir(path: Path, flag: str = "--output") -> None:
    """An output directory of traces: new (created), empty, or holding only traces (a
    later run adds its own beside them); anything else is refused.

    Raises:
        ConfigError: its parent is missing (`ensure_parent`), it is a file, or it holds
            other files, naming `flag`.
    """
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{path} is a file; give a directory", field=flag)
    if not path.exists():
        ensure_parent(path, flag)
        path.mkdir()
        return
    others = [p.name for p in path.iterdir() if not p.name.endswith((".jsonl", ".jsonl.gz"))]
    if others:
        raise ConfigError(
            f"{path} is not empty and holds more than traces ({', '.join(sorted(others)[:3])}"
            f"{', ...' if len(others) > 3 else ''}); give a new or empty directory",
            field=flag,
        )


@contextlib.contextmanager
def _open_output(path: Path) -> Iterator[TextIO]:
    if str(path) == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    if path.is_dir():
        raise ConfigError(f"{path} is a directory; give a file path", field="--output")
    if path.exists() and not path.is_file():  # /dev/null, a FIFO: written in place
        with path.open("w", encoding="utf-8") as handle:  # (a rename would replace the
            yield handle  # device itself: as root, `-o /dev/null` made it a regular file)
        return
    ensure_parent(path, "--output")
    partial = path.with_name(f".{path.name}.partial")
    with partial.open("w", encoding="utf-8") as handle:
        yield handle
    partial.replace(path)


def write_output(path: Path, text: str) -> bool:
    """Write `text` to the file `path` (atomically: a sibling renamed over it), or to
    stdout when `path` is `-`; a device or FIFO (`/dev/null`) is written in place.

    Returns:
        True when a file was written (so the caller may print where), False for stdout.

    Raises:
        ConfigError: `path` is a directory, or its parent is missing (`ensure_parent`).
    """
    with _open_output(path) as handle:
        handle.write(text)
    return str(path) != "-"
