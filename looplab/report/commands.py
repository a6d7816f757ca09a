"""`looplab report`, `looplab dashboard`, `looplab bench report`.

Commands of the report package; `looplab.cli.app` registers them.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from looplab.cli.options import HostOpt, PortOpt, out_console
from looplab.errors import ConfigError

__all__ = ["bench_report_command", "dashboard_command", "report_command"]


def report_command(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            metavar="RUN_DIR",
            help="Experiment directories (runs/<name>), directories of traces, or trace files.",
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="HTML file to write (default: RUN_DIR/report.html for one directory, "
            "else ./report.html).",
            show_default=False,
        ),
    ] = None,
    title: Annotated[
        str | None, typer.Option(help="Page title (default: the experiment names).")
    ] = None,
    by_input: Annotated[
        bool,
        typer.Option(
            "--by-input", help="Label groups by input as well as profile (compare inputs)."
        ),
    ] = False,
    screenshot: Annotated[
        Path | None,
        typer.Option(
            help="Also save a PNG of the report's top (needs Chromium).", show_default=False
        ),
    ] = None,
    screenshot_height: Annotated[
        int, typer.Option(help="Height in pixels of the screenshot (width 1280).")
    ] = 2000,
) -> None:
    """Write one self-contained HTML report comparing the profiles of recorded runs.

    Headline speedups with bootstrap CIs, compounding over steps, where the time goes,
    per-run timelines, decode-rate and TTFT sensitivity, per-step distributions. Opens
    offline in any browser (no scripts, no network).
    """
    from looplab.report.build import write_report

    if output is None:
        single = len(run_dirs) == 1 and run_dirs[0].is_dir()
        output = run_dirs[0] / "report.html" if single else Path("report.html")
    if output.is_dir():
        raise ConfigError(f"{output} is a directory; give a file path", field="--output")
    result = write_report(
        run_dirs, output, title=title, group_by="input" if by_input else "profile"
    )
    console = out_console()
    if result.model.sentence:
        console.print(result.model.sentence, highlight=False)
    console.print(f"{result.runs} runs, {result.seconds:.2f} s")
    if screenshot is not None:
        from looplab.report.screenshot import screenshot as take

        take(output, screenshot, height=screenshot_height)
        console.print(f"screenshot: {screenshot}")
    console.print(f"report: {output.resolve()}")


def dashboard_command(
    root: Annotated[
        Path, typer.Argument(metavar="[RUNS_ROOT]", help="Directory holding experiments.")
    ] = Path("runs"),
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8760,
) -> None:
    """Serve a read-only dashboard of the experiments under RUNS_ROOT on 127.0.0.1.

    Lists experiments with their headline numbers, opens their reports, and compares any
    two experiments or runs side by side. Nothing outside RUNS_ROOT is served.
    """
    from looplab.report.server import DashboardServer

    if not root.is_dir():
        raise ConfigError(f"{root}: no such directory", field="RUNS_ROOT")
    server = DashboardServer(root, port=port, host=host)
    out_console().print(f"dashboard of {root.resolve()}: {server.url} (Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


def bench_report_command(
    runs: Annotated[int, typer.Option(min=1, help="Synthetic runs in the experiment.")] = 1000,
) -> None:
    """Time to write the HTML report of an experiment with RUNS synthetic runs (target: seconds)."""
    from looplab.report.build import write_report
    from looplab.report.synthetic import write_synthetic_experiment

    with tempfile.TemporaryDirectory(prefix="looplab-bench-report-") as directory:
        experiment = write_synthetic_experiment(Path(directory) / "syn", runs)
        times: list[float] = []
        for _ in range(3):
            result = write_report([experiment], Path(directory) / "report.html")
            times.append(result.seconds)
        size_mb = (Path(directory) / "report.html").stat().st_size / 1e6
    out_console().print(
        f"report of {runs} runs: {statistics.median(times):.2f} s median of 3 "
        f"(min {min(times):.2f} s), {size_mb:.1f} MB"
    )
