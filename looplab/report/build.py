"""Report generation: inputs -> run records -> model -> one self-contained HTML file (or
the report's data as JSON, for scripts)."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from looplab.errors import ConfigError
from looplab.layout import ExperimentDir
from looplab.report.data.exports import report_json
from looplab.report.data.knobs import variant_labels
from looplab.report.data.pairing import ComparisonKey, comparison_key, group_prefix
from looplab.report.data.records import RunRecord, load_runs
from looplab.report.render.page import render_page
from looplab.report.views.detail import TRANSCRIPTS
from looplab.report.views.report_model import ReportModel, build_model
from looplab.traces.inputs import SetAside

__all__ = [
    "FORMATS",
    "ReportResult",
    "assign_groups",
    "build_model_for",
    "build_report",
    "configured_deadline",
    "load_records",
    "write_report",
]

FORMATS: dict[str, Callable[[ReportModel], str]] = {
    "html": render_page,
    "json": lambda model: json.dumps(report_json(model), indent=1) + "\n",
}
"""Output formats of `looplab report --format`: name -> renderer of the model."""


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

    `profile` groups by backend profile within each comparison group (agent, task set,
    clock: `report/data/pairing.py`, whose differing parts prefix the label when the runs
    hold several), and prefixes the input's name only where the same profile name of one
    comparison group comes from several inputs (two experiments both at `slow-80`). Where
    one profile of a comparison group holds runs of several models, the model comes before
    the profile (`big-slow · slow-80`): an arm is a model at a profile (where each profile
    holds one model, the profile already names the arm, and the bottom line names models).
    `input` always prefixes it (side-by-side comparison of inputs). Runs of an experiment
    with axes get their variant's label appended (`slow-80 · streaming_dispatch`).
    """
    keys = {r.run_id: comparison_key(r) for r in records}
    distinct = sorted(set(keys.values()))
    models: dict[tuple[ComparisonKey, str], set[str | None]] = defaultdict(set)
    for record in records:
        models[keys[record.run_id], record.profile].add(record.model)
    mixed = {
        key for key, _ in models if any(len(m) > 1 for (k, _), m in models.items() if k == key)
    }
    inputs_of: dict[tuple[ComparisonKey, str], set[str]] = defaultdict(set)
    for record in records:
        inputs_of[keys[record.run_id], record.profile].add(record.input_name)
    variants = variant_labels(records)
    for record in records:
        key = keys[record.run_id]
        clash = len(inputs_of[key, record.profile]) > 1
        model = (record.model or "model ?") if key in mixed else ""
        label = " · ".join(p for p in (group_prefix(key, distinct), model, record.profile) if p)
        if group_by == "input" or clash:
            record.group = f"{record.input_name} · {label}"
        else:
            record.group = label
        if record.run_id in variants:  # an experiment with axes: one group per variant
            record.group += f" · {variants[record.run_id]}"


def load_records(
    inputs: Sequence[Path], set_aside: list[SetAside] | None = None
) -> list[RunRecord]:
    """The complete runs of `inputs`, refusing a run that two inputs both hold; the trace
    files not counted go to `set_aside` (`load_runs`).

    Raises:
        ConfigError: no complete run, or the same run in two inputs (an input compared
            with itself, or with a part of itself).
        TraceError: a file that is not a looplab trace.
    """
    records = load_runs(list(inputs), set_aside)
    if not records:
        raise ConfigError(
            f"no complete runs in {', '.join(str(p) for p in inputs)}", field="RUN_DIR"
        )
    seen: dict[str, RunRecord] = {}
    for record in records:
        other = seen.setdefault(record.run_id, record)
        if other is not record:
            where = [str(r.trace.path if r.trace else r.input_name) for r in (other, record)]
            raise ConfigError(
                f"run {record.run_id} is given twice ({where[0]} and {where[1]}): an input "
                "compared with itself, or with a part of itself, would count its runs twice; "
                "give distinct inputs",
                field="RUN_DIR",
            )
    return records


def build_model_for(
    inputs: Sequence[Path],
    *,
    title: str | None = None,
    group_by: Literal["profile", "input"] = "profile",
    transcripts: int = TRANSCRIPTS,
    deadline_s: float | None = None,
) -> tuple[ReportModel, list[RunRecord]]:
    """The model of a report over `inputs` and the run records it was computed from;
    `deadline_s`: the user's deadline (None: the inputs' configs' `deadline_s`, else a cap
    the bottom line picks)."""
    set_aside: list[SetAside] = []
    records = load_records(inputs, set_aside)
    assign_groups(records, group_by)
    names = [p.resolve().name for p in inputs]
    model = build_model(
        records,
        title or _default_title(records, names),
        names,
        transcript_limit=transcripts,
        deadline_s=deadline_s if deadline_s is not None else configured_deadline(inputs),
    )
    model.set_aside = set_aside
    return model, records


def build_report(
    inputs: Sequence[Path],
    *,
    title: str | None = None,
    group_by: Literal["profile", "input"] = "profile",
    transcripts: int = TRANSCRIPTS,
) -> tuple[str, ReportModel]:
    """The HTML of a report over `inputs` (experiment directories, trace directories or
    trace files), and its model.

    Raises:
        ConfigError: an input without complete traces, or a run in two inputs.
        TraceError: a file that is not a looplab trace.
    """
    model, _ = build_model_for(inputs, title=title, group_by=group_by, transcripts=transcripts)
    return render_page(model), model


def write_report(
    inputs: Sequence[Path],
    output: Path,
    *,
    title: str | None = None,
    group_by: Literal["profile", "input"] = "profile",
    transcripts: int = TRANSCRIPTS,
    format: str = "html",
    deadline_s: float | None = None,
) -> ReportResult:
    """Write the report to `output` (atomically) and say how long it took.

    Raises:
        ConfigError: an unknown format (and see `build_report`).
    """
    if format not in FORMATS:
        raise ConfigError(f"unknown format {format!r}", field="--format", allowed=list(FORMATS))
    started = time.perf_counter()
    model, _ = build_model_for(
        inputs, title=title, group_by=group_by, transcripts=transcripts, deadline_s=deadline_s
    )
    text = FORMATS[format](model)
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(f".{output.name}.tmp")
    partial.write_text(text, encoding="utf-8")
    partial.replace(output)
    return ReportResult(output, model.runs, time.perf_counter() - started, model)


def configured_deadline(inputs: Sequence[Path]) -> float | None:
    """The deadline an input experiment's stored config sets (`deadline_s` in
    `config.json`; the smallest when several do); None: none sets one."""
    found: list[float] = []
    for path in inputs:
        config = ExperimentDir(path).config if path.is_dir() else None
        if config is None or not config.is_file():
            continue
        try:
            value = json.loads(config.read_text(encoding="utf-8")).get("deadline_s")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            found.append(float(value))
    return min(found) if found else None


def _default_title(records: Sequence[RunRecord], names: Sequence[str]) -> str:
    experiments = sorted({r.experiment for r in records})
    return "looplab report: " + " vs ".join(experiments or names)
