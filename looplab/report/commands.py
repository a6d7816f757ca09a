"""`looplab report`, `looplab dashboard`, `looplab bench report`.

Commands of the report package; `looplab.cli.app` registers them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from looplab.console import HostOpt, PortOpt, out_console, write_output
from looplab.errors import ConfigError
from looplab.report.views.detail import TRANSCRIPTS

if TYPE_CHECKING:
    from looplab.report.views.report_model import ReportModel

__all__ = ["dashboard_command", "diff_command", "report_command"]


RunDirsArg = Annotated[
    list[Path],
    typer.Argument(
        metavar="RUN_DIR",
        help="Experiment directories (runs/<name>), directories of traces, or trace files.",
    ),
]
ReportOutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="File to write, '-' for stdout (default: RUN_DIR/report.html or .json for one "
        "directory, else ./report.html or .json).",
        show_default=False,
    ),
]
FormatOpt = Annotated[
    str, typer.Option("--format", help="html (the page) or json (its data, for scripts).")
]
TitleOpt = Annotated[str | None, typer.Option(help="Page title (default: the experiment names).")]
ByInputOpt = Annotated[
    bool,
    typer.Option("--by-input", help="Label groups by input as well as profile (compare inputs)."),
]
TranscriptsOpt = Annotated[
    int,
    typer.Option(
        min=0,
        help="Embed the transcripts of at most this many runs (the dashboard shows every run's).",
    ),
]
DeadlineOpt = Annotated[
    str | None,
    typer.Option(
        "--deadline",
        help="Your deadline for a task (90s, 2m, 1.5h): each arm's share solved within it, "
        "the area under success vs time budget up to it (default: the experiment config's "
        "deadline_s, else a cap picked from the slowest arm's median).",
        show_default=False,
    ),
]
ScreenshotOpt = Annotated[
    Path | None,
    typer.Option(
        help="Also save a PNG of the report (needs Chromium); see --screenshot-at.",
        show_default=False,
    ),
]
ScreenshotHeightOpt = Annotated[
    int, typer.Option(help="Height in pixels of the screenshot (width 1280).")
]
ScreenshotAtOpt = Annotated[
    str,
    typer.Option(
        help="What to photograph: top (the page's top), diff (the first step-aligned diff) or "
        "transcript (the featured run's timeline and transcript)."
    ),
]


def report_command(
    run_dirs: RunDirsArg,
    output: ReportOutputOpt = None,
    format: FormatOpt = "html",
    title: TitleOpt = None,
    by_input: ByInputOpt = False,
    transcripts: TranscriptsOpt = TRANSCRIPTS,
    screenshot: ScreenshotOpt = None,
    screenshot_height: ScreenshotHeightOpt = 2000,
    screenshot_at: ScreenshotAtOpt = "top",
    deadline: DeadlineOpt = None,
) -> None:
    """Write one self-contained report comparing the profiles of recorded runs.

    Headline speedups with bootstrap CIs over matched cells (unlike inputs flagged),
    compounding over steps, where the time goes, per-run timelines and transcripts,
    step-aligned diffs, decode-rate and TTFT sensitivity, per-step distributions. The HTML
    opens offline in any browser (no network); with scripts on it adds filters, zoom,
    sorting and CSV/JSON downloads. --format json writes the same data for scripts.
    Ends by printing the claim check ("Is 750 tok/s worth it?": these runs by kind of
    task, the shipped corpus re-timed, the Amdahl band, the published claims).
    """
    from looplab.report.build import FORMATS, write_report
    from looplab.report.render.screenshot import SCREENSHOT_TARGETS

    if format not in FORMATS:
        raise ConfigError(f"unknown format {format!r}", field="--format", allowed=list(FORMATS))
    if screenshot_at not in SCREENSHOT_TARGETS:
        raise ConfigError(
            f"unknown target {screenshot_at!r}",
            field="--screenshot-at",
            allowed=list(SCREENSHOT_TARGETS),
        )
    deadline_s = _deadline(deadline)
    if output is None:
        single = len(run_dirs) == 1 and run_dirs[0].is_dir()
        output = (run_dirs[0] if single else Path(".")) / f"report.{format}"
    if str(output) == "-":
        _report_to_stdout(run_dirs, format, title, by_input, transcripts, deadline_s)
        return
    if output.is_dir():
        raise ConfigError(f"{output} is a directory; give a file path", field="--output")
    result = write_report(
        run_dirs,
        output,
        title=title,
        group_by="input" if by_input else "profile",
        transcripts=transcripts,
        format=format,
        deadline_s=deadline_s,
    )
    console = out_console()
    if result.model.sentence and len(result.model.bottom_lines) <= 1:
        console.print(result.model.sentence, highlight=False)
    aside = len(result.model.set_aside)
    console.print(
        f"{result.runs} runs, {result.seconds:.2f} s"
        + (f"; {aside} trace file(s) set aside, named in the report" if aside else "")
    )
    if screenshot is not None:
        if format != "html":
            raise ConfigError("a screenshot needs --format html", field="--screenshot")
        from looplab.report.render.screenshot import screenshot as take

        take(output, screenshot, height=screenshot_height, at=screenshot_at)
        console.print(f"screenshot: {screenshot}")
    console.print(f"report: {output.resolve()}")
    _print_answer(result.model)


def _print_answer(model: ReportModel) -> None:
    """The claim panel, then the answer last, where the eye lands (issue 33): the success
    table and one bottom line per agent and task set."""
    console = out_console()
    if model.claim is not None:
        from looplab.report.claims.panel import claim_panel

        console.print(claim_panel(model.claim))
    if model.bottom_lines:
        console.print(
            "[bold]Your answer, per agent and task set[/] (the report shows these first):"
        )
    if model.success is not None and model.success.arms:
        from looplab.report.render.success import success_table

        console.print(success_table(model.success))
    for line in model.bottom_lines:
        console.print(f"[bold]Bottom line:[/] {line.text}", highlight=False)


def _deadline(text: str | None) -> float | None:
    """`--deadline` in seconds (None: not given).

    Raises:
        ConfigError: not a duration.
    """
    if text is None:
        return None
    from looplab.stats.durations import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--deadline") from None


def _report_to_stdout(
    run_dirs: list[Path],
    format: str,
    title: str | None,
    by_input: bool,
    transcripts: int,
    deadline_s: float | None,
) -> None:
    from looplab.report.build import FORMATS, build_model_for

    model, _ = build_model_for(
        run_dirs,
        title=title,
        group_by="input" if by_input else "profile",
        transcripts=transcripts,
        deadline_s=deadline_s,
    )
    write_output(Path("-"), FORMATS[format](model))


def dashboard_command(
    root: Annotated[
        Path, typer.Argument(metavar="[RUNS_ROOT]", help="Directory holding experiments.")
    ] = Path("runs"),
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8760,
) -> None:
    """Serve a read-only dashboard of the experiments under RUNS_ROOT on 127.0.0.1.

    Lists experiments by name with their headline numbers (an unreadable one with its
    error), opens their reports (refreshing while an experiment runs), shows every run's
    timeline and full transcript, the step-aligned diff of any two runs of a task (two
    clicks from the index: a task, then a pair), and compares two experiments side by side.
    Nothing outside RUNS_ROOT is served; Ctrl-C stops it.
    """
    from looplab.report.dashboard.server import DashboardServer

    if not root.is_dir():
        raise ConfigError(f"{root}: no such directory", field="RUNS_ROOT")
    server = DashboardServer(root, port=port, host=host)
    out_console().print(f"dashboard of {root.resolve()}: {server.url} (Ctrl-C to stop)")
    server.serve_forever()


SidesArg = Annotated[
    list[str],
    typer.Argument(
        metavar="SIDE",
        help="2 to 8 sides: an experiment directory, a directory of traces or a trace file, "
        "optionally PATH#NAME for its runs of one profile, agent or model; one SIDE alone "
        "compares its profiles.",
    ),
]
BaselineOpt = Annotated[
    str,
    typer.Option(
        "--baseline",
        "-b",
        help="The side the others are compared with: its position (1-8) or its SIDE text.",
    ),
]
DiffFormatOpt = Annotated[
    str, typer.Option("--format", help="text (tables) or json (the same numbers, for scripts).")
]


def diff_command(
    sides: SidesArg,
    baseline: BaselineOpt = "1",
    format: DiffFormatOpt = "text",
    output: Annotated[
        Path, typer.Option("--output", "-o", help="File to write, '-' for stdout.")
    ] = Path("-"),
) -> None:
    """Compare experiments, profiles or runs side by side: per task A | B | delta.

    For each side against the baseline: per task the median time, success rate, cost,
    steps and tokens of both, their change (▲ worse, ▼ better), the paired time
    difference over repetitions (mean, 95% t interval, pairs where B was faster), and over
    all tasks the speedup with its paired bootstrap CI. Two runs of one task (two trace
    files) also get the call-level diff: model and tool calls aligned across sub-runs,
    per call B - A, calls only one run made, where they diverge, the critical paths. The
    dashboard's /compare and /diff pages show the same numbers.
    """
    import json

    from looplab.report.render.compare_text import pairwise_table
    from looplab.report.sides import load_sides
    from looplab.report.views.side_by_side import side_by_side

    if format not in ("text", "json"):
        raise ConfigError(f"unknown format {format!r}", field="--format", allowed=["text", "json"])
    loaded = load_sides(sides)
    labels = [s.label for s in loaded]
    index = _baseline_index(baseline, sides, labels)
    view = side_by_side(loaded, index)
    if format == "json":
        text = json.dumps(view.to_json(), indent=2)
        if write_output(output, text + "\n"):
            out_console().print(f"written: {output}")
        return
    console = out_console() if str(output) == "-" else None
    if console is None:
        from rich.console import Console

        with output.open("w", encoding="utf-8") as handle:
            file_console = Console(file=handle, width=160)
            for pair in view.comparisons:
                file_console.print(pairwise_table(view, pair))
        return
    for pair in view.comparisons:
        console.print(pairwise_table(view, pair))
        for issue in pair.issues:
            console.print(f"[yellow]unlike inputs:[/] {issue}", highlight=False)
    runs = [s.runs[0] for s in loaded if len(s.runs) == 1]
    if len(runs) == 2 == len(loaded) and runs[0].task == runs[1].task:
        from looplab.report.render.span_diff import span_diff_table
        from looplab.report.views.span_diff import span_diff

        a, b = runs if index == 0 else runs[::-1]
        console.print(span_diff_table(span_diff(a, b)))


def _baseline_index(baseline: str, specs: list[str], labels: list[str]) -> int:
    """The baseline's index from a 1-based position or a side's text.

    Raises:
        ConfigError: neither names a side.
    """
    if baseline.isdigit() and 1 <= int(baseline) <= len(labels):
        return int(baseline) - 1
    for names in (labels, specs):
        if baseline in names:
            return names.index(baseline)
    raise ConfigError(f"--baseline {baseline!r} names no side", field="--baseline", allowed=labels)
