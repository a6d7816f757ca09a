"""What `looplab run` prints and writes when its cells end (or are interrupted).

The per-backend summary, the knob table (with the WebSocket's saving next to OpenAI's
claim when `backend.transport` is an axis), `report.html` in the output directory, the
reference verdict (`ENVIRONMENT BROKEN`), failed cells, and whether anything was measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from looplab.console import err_console, out_console
from looplab.layout import ExperimentDir, trace_files
from looplab.traces.end_reason import EndReason

__all__ = ["finish_run", "nothing_measured", "print_interrupted", "where"]


def where(experiment: Any) -> str:
    """Where the cells run, for the start line (both limits when trace-driven cells have
    their own: the running list can hold that many more)."""
    from looplab.tasks.references import is_trace_driven

    executor = experiment.executor
    if executor.kind == "ray":
        return f"executor ray at {executor.address}"
    driven = experiment.workload.concurrency
    if driven and any(isinstance(t, str) and is_trace_driven(t) for t in experiment.tasks):
        return f"concurrency {experiment.concurrency}, trace-driven cells {driven} beside them"
    return f"concurrency {experiment.concurrency}"


def _write_report(directory: Path) -> None:
    """Write `report.html` into the run's directory, or say the one command that does."""
    from looplab.errors import LooplabError
    from looplab.report.build import write_report

    try:
        done = write_report([directory], ExperimentDir(directory).report)
    except (LooplabError, OSError) as exc:
        err_console().print(
            f"[yellow]no report written[/] ({exc}); make it with: looplab report {directory}",
            highlight=False,
        )
        return
    out_console().print(f"report: {done.path} ({done.seconds:.1f} s)", highlight=False)


def print_interrupted(traces: Path, total: int, config: Path) -> None:
    """The interrupt summary: complete traces kept, and the command that resumes."""
    from looplab.experiments.directory import is_complete

    kept = sum(1 for p in trace_files(traces) if is_complete(p))
    err_console().print(
        f"[yellow]interrupted[/]: {kept} of {total} complete cell traces kept in {traces} "
        "(a cut-off run is set aside, never counted). Resume with the same command: "
        f"looplab run {config}",
        highlight=False,
    )


def finish_run(result: Any, choose: Any = None) -> None:
    """The per-backend table, the knob table, report.html, the reference verdict and
    failures; exit 1 when cells failed, nothing was measured or the environment is broken.
    `choose` (the config's `ChooseSettings`): also the "which to use" answer, last."""
    from looplab.experiments.summaries.verdict import reference_verdict
    from looplab.report.build import assign_groups
    from looplab.report.data.records import load_runs
    from looplab.report.views.report_model import headline

    records = load_runs([result.directory])
    assign_groups(records)  # one group per backend, and per variant when there are axes
    _print_summary(headline(records))
    _print_knobs(records)
    _print_bottom_lines(records, result.directory)
    console = out_console()
    console.print(f"results: {result.directory} (traces/, results.duckdb)")
    _write_report(result.directory)
    verdict = reference_verdict(ExperimentDir(result.directory).traces)
    if not verdict.ok:
        err_console().print(f"[bold red]{verdict.message}[/]", highlight=False)
    failed = [o for o in result.outcomes if o.status == "failed"]
    if failed:
        err_console().print(
            f"[red]{len(failed)} cell(s) failed[/]: "
            + "; ".join(f"{o.cell.id}: {o.error}" for o in failed[:5]),
            highlight=False,
        )
    broken = nothing_measured(result.outcomes)
    if broken:
        err_console().print(f"[bold red]{broken}[/]", highlight=False)
    if choose is not None:
        _print_choice(records, choose)
    if failed or broken or not verdict.ok:
        raise typer.Exit(1)


_ERROR_ENDS = frozenset({EndReason.BACKEND_ERROR, EndReason.ERROR})
"""End reasons of a cell that measured nothing: the backend or the harness failed."""


def nothing_measured(outcomes: list[Any]) -> str | None:
    """A sentence when every cell run now ended in an error (`backend_error`, `error`):
    then nothing was measured, and the cause is almost always the configuration (a wrong
    URL, model or key), so the run exits 1 instead of reporting empty numbers."""
    ran = [o for o in outcomes if o.status == "done"]
    if not ran or any(o.end_reason not in _ERROR_ENDS for o in ran):
        return None
    causes = sorted({str(o.error or o.end_reason) for o in ran})
    shown = "; ".join(cause[:300] for cause in causes[:3])
    return (
        f"every cell ({len(ran)}) ended in an error, so nothing was measured "
        f"({len(causes)} distinct cause(s)): {shown}"
    )


def _print_knobs(records: list[Any]) -> None:
    """The knob table (`looplab.report.data.knobs`), when the runs have axes."""
    from looplab.experiments.summaries.knob_table import knob_table, variant_speedups
    from looplab.report.data.knobs import knob_rows

    rows = knob_rows(records)
    if rows:
        out_console().print(knob_table(rows))
        speedups = variant_speedups(rows)
        if speedups:
            out_console().print(speedups)
        _print_transport(records)


def _print_transport(records: list[Any]) -> None:
    """Per backend, how much shorter the WebSocket made the task than HTTP (runs with a
    `backend.transport` axis), next to OpenAI's published claim."""
    from looplab.claims.model import get_claim
    from looplab.experiments.summaries.transport_line import transport_lines

    claim = get_claim("responses-websocket")
    c = claim.claimed
    claimed = (
        f"OpenAI ({claim.source.date}): {c.text} ({c.low:.0%}..{c.high:.0%}; "
        f"looplab claims check {claim.name})"
    )
    for line in transport_lines(records, claimed):
        out_console().print(line, highlight=False)


def _print_summary(groups: list[Any]) -> None:
    from looplab.report.views.group import headline_sentence

    table = Table(title="per backend (median over runs; split = share of summed task time)")
    for column in (
        "backend",
        "tok/s",
        "runs",
        "solved",
        "task s p50",
        "p90",
        "steps",
        "model",
        "tools",
        "other",
        "speedup (95% CI)",
    ):
        table.add_column(column, justify="right")
    for group in groups:
        ci = f" ({group.ci[0]:.2f}-{group.ci[1]:.2f})" if group.ci else ""
        table.add_row(
            group.label,
            f"{group.decode_tps:g}" if group.decode_tps else "-",
            str(group.runs),
            f"{group.solved}/{group.checked}",
            f"{group.median_task_s:.2f}",
            f"{group.p90_task_s:.2f}",
            f"{group.median_steps:g}",
            f"{group.model_share:.0%}",
            f"{group.tool_share:.0%}",
            f"{group.overhead_share:.0%}",
            _speedup_cell(group, ci),
        )
    out_console().print(table)
    sentence = headline_sentence(groups) if len({g.comparison for g in groups}) <= 1 else ""
    if sentence:
        out_console().print(sentence, highlight=False)


def _speedup_cell(group: Any, ci: str) -> str:
    """The speedup in the table, in words where it has no number."""
    if group.speedup == group.speedup:
        return f"{group.speedup:.2f}x{ci}"
    return "no paired task"


def _print_bottom_lines(records: list[Any], directory: Path) -> None:
    """The success table per arm (`views/success.py`), then one sentence per comparison
    group (agent, task set, clock): `views/bottom_line.py`, under the config's
    `deadline_s` when it sets one."""
    from looplab.report.build import configured_deadline
    from looplab.report.render.success import success_table
    from looplab.report.views.bottom_line import bottom_lines, picked_caps
    from looplab.report.views.success import success_view

    deadline = configured_deadline([directory])
    lines = bottom_lines(records, deadline)
    view = success_view(records, deadline, picked=picked_caps(lines))
    if view.arms:
        out_console().print(success_table(view))
    for line in lines:
        out_console().print(f"[bold]Bottom line[/] {line.text}", highlight=False)


def _print_choice(records: list[Any], choose: Any) -> None:
    """Which to use (`looplab choose`): the policy table of the config's two arms."""
    from looplab.errors import ConfigError
    from looplab.report.render.choice import choice_text
    from looplab.report.views.choice import arm_choice

    try:
        view = arm_choice(
            records, choose.a, choose.b, tries=choose.tries, deadline_s=choose.deadline_s
        )
    except ConfigError as exc:
        err_console().print(f"[yellow]no policy table[/]: {exc}", highlight=False)
        return
    for line in choice_text(view):
        out_console().print(line, highlight=False, markup=False)
