"""`looplab choose`: which of two arms to use, per task, by when, for how much.

Registered by `looplab.cli.app`; the numbers are `report/views/choice.py` over
`analysis/choice.py` and `analysis/shift.py`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer

from looplab.console import out_console, write_output
from looplab.errors import ConfigError

__all__ = ["choose_command", "parse_deadline"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$")
_UNIT_S = {None: 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
FORMATS = ("text", "json")


def parse_deadline(text: str | None, flag: str = "--deadline") -> float | None:
    """`90`, `90s`, `2m`, `1.5h` -> seconds (None for None).

    Raises:
        ConfigError: another spelling, or zero.
    """
    if text is None:
        return None
    match = _DURATION.match(text)
    seconds = float(match[1]) * _UNIT_S[match[2]] if match else 0.0
    if seconds <= 0:
        raise ConfigError(
            f"not a deadline: {text!r}", field=flag, allowed=["90", "90s", "2m", "1.5h"]
        )
    return seconds


def choose_command(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            metavar="RUN_DIR",
            help="Experiment directories (runs/<name>), directories of traces, or trace files.",
        ),
    ],
    a: Annotated[
        str | None,
        typer.Option(
            "--a",
            help="Arm A: a run group's label as the report shows it: the backend "
            "(small-fast), or with axes 'backend · variant'.",
        ),
    ] = None,
    b: Annotated[
        str | None,
        typer.Option("--b", help="Arm B: another label (e.g. large-slow)."),
    ] = None,
    tries: Annotated[
        int, typer.Option(min=1, max=10, help="Most tries of a retrying policy (k).")
    ] = 3,
    deadline: Annotated[
        str | None,
        typer.Option(help="Your deadline per task: 90, 90s, 2m, 1.5h (adds 'solved in time')."),
    ] = None,
    format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    output: Annotated[
        Path, typer.Option("--output", "-o", help="File to write, '-' for stdout.")
    ] = Path("-"),
) -> None:
    """Which to use: the policy table of two arms on their paired tasks.

    A only, B only, each retried up to --tries, A then B on failure, B then A: expected
    time, cost and success per task (failed tries' time and money counted), time and cost
    per solved task, success under --deadline, the Pareto set, the decode rate at which
    A's time to a solved task would beat B's, and the behaviour shift (steps, tool calls,
    output tokens, retries, repeated reads; paired sign-flip test). Without --a/--b, every
    comparison group with checked runs: its fastest label against its slowest.
    """
    from looplab.report.build import assign_groups
    from looplab.report.data.records import load_runs
    from looplab.report.render.choice import choice_text
    from looplab.report.views.choice import arm_choice, choice_json, choice_views

    if format not in FORMATS:
        raise ConfigError(f"unknown format {format!r}", field="--format", allowed=list(FORMATS))
    if (a is None) != (b is None):
        raise ConfigError("give both --a and --b, or neither", field="--a" if a is None else "--b")
    seconds = parse_deadline(deadline)
    records = load_runs(run_dirs)
    assign_groups(records)  # labels as the report's: backend, `backend · variant` with axes
    if a is not None and b is not None:
        views = [arm_choice(records, a, b, tries=tries, deadline_s=seconds)]
    else:
        views = choice_views(records, tries=tries, deadline_s=seconds)
        if not views:
            raise ConfigError(
                "no comparison group has two labels with checked runs on shared tasks; "
                "name the arms with --a and --b",
                field="RUN_DIR",
            )
    if format == "json":
        text = json.dumps([choice_json(v) for v in views], indent=2) + "\n"
    else:
        text = "\n\n".join("\n".join(choice_text(v)) for v in views) + "\n"
    if write_output(output, text):
        out_console().print(f"written: {output}")
