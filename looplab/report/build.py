"""Report generation: inputs -> run records -> model -> one self-contained HTML file."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from looplab.errors import ConfigError
from looplab.report.model import RunRecord, load_runs
from looplab.report.page import render_page
from looplab.report.views import ReportModel, build_model

__all__ = ["ReportResult", "assign_groups", "build_report", "write_report"]


@dataclass(frozen=True)
class ReportResult:
    """A written report."""

    path: Path
    runs: int
    seconds: float
    model: ReportModel


def assign_groups(
    records: Sequence[RunRecord], group_by: Literal["profile", "input"] = "profile"
) -> None:
    """Set each record's group label.

    `profile` groups by backend profile, and prefixes the input's name only where the
    same profile name comes from several inputs (two experiments both at `slow-80`).
    `input` always prefixes it (side-by-side comparison of inputs).
    """
    inputs_of: dict[str, set[str]] = defaultdict(set)
    for record in records:
        inputs_of[record.profile].add(record.input_name)
    for record in records:
        clash = len(inputs_of[record.profile]) > 1
        if group_by == "input" or clash:
            record.group = f"{record.input_name} · {record.profile}"
        else:
            record.group = record.profile


def build_report(
    inputs: Sequence[Path],
    *,
    title: str | None = None,
    group_by: Literal["profile", "input"] = "profile",
) -> tuple[str, ReportModel]:
    """The HTML of a report over `inputs` (experiment directories, trace directories or
    trace files), and its model.

    Raises:
        ConfigError: an input without complete traces.
        TraceError: a file that is not a looplab trace.
    """
    records = load_runs(list(inputs))
    if not records:
        raise ConfigError(
            f"no complete runs in {', '.join(str(p) for p in inputs)}", field="RUN_DIR"
        )
    assign_groups(records, group_by)
    names = [p.resolve().name for p in inputs]
    model = build_model(records, title or _default_title(records, names), names)
    return render_page(model), model


def write_report(
    inputs: Sequence[Path],
    output: Path,
    *,
    title: str | None = None,
    group_by: Literal["profile", "input"] = "profile",
) -> ReportResult:
    """Write the report to `output` (atomically) and say how long it took."""
    started = time.perf_counter()
    html, model = build_report(inputs, title=title, group_by=group_by)
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(f".{output.name}.tmp")
    partial.write_text(html, encoding="utf-8")
    partial.replace(output)
    return ReportResult(output, model.runs, time.perf_counter() - started, model)


def _default_title(records: Sequence[RunRecord], names: Sequence[str]) -> str:
    experiments = sorted({r.experiment for r in records})
    return "looplab report: " + " vs ".join(experiments or names)
