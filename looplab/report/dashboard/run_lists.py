"""The dashboard's run lists: `/runs` (every run under the root, filtered) and the table a
task page shows. Columns people expect (experiment, task, agent, model, profile, outcome,
time, cost, tokens, steps, sub-runs), sortable from the keyboard; filters by experiment,
task, model, agent, profile, outcome and a duration range, and a text search over tasks
and transcripts (messages, tool arguments and outputs). The filter is a GET form: the
URL holds it, so a filtered list is a link.

Every number comes from `views.run_metrics.run_metrics`, the one per-run accessor.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from html import escape
from urllib.parse import urlencode

from looplab.errors import ConfigError
from looplab.report.dashboard.experiments import Experiment, Reports
from looplab.report.data.records import RunRecord
from looplab.report.render.compare_text import fmt_metric
from looplab.report.render.scales import fmt_s
from looplab.report.views.run_metrics import METRICS, OUTCOMES, RunMetrics, run_metrics

__all__ = ["RunFilter", "filter_form", "filter_runs", "parse_filter", "run_list_table", "run_text"]

_BY_KEY = {m.key: m for m in METRICS}


@dataclass(frozen=True)
class RunFilter:
    """What a run list keeps (empty values keep everything)."""

    experiment: str = ""
    task: str = ""
    model: str = ""
    agent: str = ""
    profile: str = ""
    outcome: str = ""
    """`solved`, `not solved` or `not checked`."""
    min_s: float | None = None
    max_s: float | None = None
    q: str = ""
    """Text searched (case-insensitive) in the task and the transcript."""

    def query(self, **changes: str) -> str:
        """This filter (with `changes`) as a query string."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return urlencode({k: v for k, v in values.items() if v not in ("", None)})


def parse_filter(params: Mapping[str, str]) -> RunFilter:
    """A filter from query parameters.

    Raises:
        ConfigError: an unknown outcome, or a duration that is not a number >= 0.
    """
    outcome = params.get("outcome", "").strip()
    if outcome and outcome not in OUTCOMES.values():
        raise ConfigError(
            f"unknown outcome {outcome!r}", field="outcome", allowed=list(OUTCOMES.values())
        )
    bounds: dict[str, float | None] = {}
    for key in ("min_s", "max_s"):
        raw = params.get(key, "").strip()
        try:
            bounds[key] = float(raw) if raw else None
        except ValueError:
            raise ConfigError(f"{key}={raw!r} is not a number of seconds", field=key) from None
        value = bounds[key]
        if value is not None and value < 0:
            raise ConfigError(f"{key}={raw!r} is negative", field=key)
    return RunFilter(
        experiment=params.get("experiment", "").strip(),
        task=params.get("task", "").strip(),
        model=params.get("model", "").strip(),
        agent=params.get("agent", "").strip(),
        profile=params.get("profile", "").strip(),
        outcome=outcome,
        min_s=bounds["min_s"],
        max_s=bounds["max_s"],
        q=params.get("q", "").strip(),
    )


def run_text(record: RunRecord) -> str:
    """What the text search reads: the task, the messages, tool arguments and outputs
    (lower case)."""
    parts = [record.task, record.run_id]
    trace = record.trace
    if trace is not None:
        for call in trace.model_calls():
            if call.message is not None:
                parts.append(json.dumps(call.message, ensure_ascii=False))
        for tool in trace.tool_calls():
            parts += [tool.name, tool.arguments or "", tool.output or ""]
        end = trace.end
        if end is not None and end.check_output:
            parts.append(end.check_output)
    return "\n".join(parts).lower()


def filter_runs(
    found: Sequence[tuple[Experiment, RunRecord]], keep: RunFilter
) -> list[tuple[Experiment, RunRecord, RunMetrics]]:
    """The runs `keep` keeps, with their numbers, in the given order."""
    out = []
    needle = keep.q.lower()
    for experiment, record in found:
        m = run_metrics(record)
        wanted = (
            (not keep.experiment or keep.experiment in (experiment.rel, experiment.name))
            and (not keep.task or record.task == keep.task)
            and (not keep.model or m.model == keep.model)
            and (not keep.agent or m.agent == keep.agent)
            and (not keep.profile or m.profile == keep.profile)
            and (not keep.outcome or m.outcome == keep.outcome)
            and (keep.min_s is None or m.time_s >= keep.min_s)
            and (keep.max_s is None or m.time_s <= keep.max_s)
        )
        if wanted and needle and needle not in run_text(record):
            wanted = False
        if wanted:
            out.append((experiment, record, m))
    return out


def _select(name: str, label: str, values: Sequence[str], chosen: str) -> str:
    options = '<option value="">any</option>' + "".join(
        f"<option{' selected' if v == chosen else ''}>{escape(v)}</option>" for v in values
    )
    return f'<label>{label}<select name="{name}" id="f-{name}">{options}</select></label>'


def filter_form(action: str, found: Sequence[tuple[Experiment, RunRecord]], keep: RunFilter) -> str:
    """The filter bar: a GET form over `action` whose choices are the values the runs hold."""
    metrics = [run_metrics(r) for _, r in found]
    choices = {
        "experiment": sorted({e.name for e, _ in found}),
        "task": sorted({r.task for _, r in found}),
        "model": sorted({m.model for m in metrics if m.model}),
        "agent": sorted({m.agent for m in metrics}),
        "profile": sorted({m.profile for m in metrics}),
        "outcome": list(OUTCOMES.values()),
    }
    selects = "".join(
        _select(name, name, values, str(getattr(keep, name)))
        for name, values in choices.items()
        if values
    )
    low = "" if keep.min_s is None else f"{keep.min_s:g}"
    high = "" if keep.max_s is None else f"{keep.max_s:g}"
    return (
        f'<form class="filters" id="run-filters" action="{escape(action)}" method="get">'
        f"{selects}"
        f'<label>min time (s)<input type="number" min="0" step="any" name="min_s" id="f-min_s" '
        f'value="{low}"></label>'
        f'<label>max time (s)<input type="number" min="0" step="any" name="max_s" id="f-max_s" '
        f'value="{high}"></label>'
        f'<label>search tasks and transcripts<input type="search" name="q" id="f-q" '
        f'value="{escape(keep.q)}"></label>'
        f'<button type="submit">filter</button> <a href="{escape(action)}">clear</a></form>'
    )


def _num(key: str, value: float | None) -> str:
    v = f' data-v="{value:.9g}"' if value is not None else ""
    return f"<td{v}>{fmt_metric(_BY_KEY[key], value)}</td>"


def run_list_table(
    rows: Sequence[tuple[Experiment, RunRecord, RunMetrics]],
    run_url: Mapping[str, str],
) -> str:
    """The sortable table of runs (`run_url`: run id -> its page)."""
    body = "".join(
        f'<tr data-run="{escape(r.run_id)}"><td class="id">'
        f'<a href="{escape(run_url.get(r.run_id, "#"))}">{escape(r.run_id)}</a></td>'
        f"<td>{escape(e.name)}</td><td>{escape(r.task)}</td>"
        f"<td>{escape(m.agent)}</td><td>{escape(m.model or '-')}</td><td>{escape(m.profile)}</td>"
        f'<td class="outcome">{escape(m.outcome)}</td>'
        f'<td data-v="{m.time_s:.9g}">{fmt_s(m.time_s)}</td>'
        + _num("cost_usd", m.cost_usd)
        + _num("tokens", None if m.tokens is None else float(m.tokens))
        + f"<td>{m.steps}</td><td>{m.subruns or ''}</td></tr>"
        for e, r, m in rows
    )
    return (
        '<div class="scroll"><table class="sortable run-list" id="run-list"><thead><tr>'
        "<th>run</th><th>experiment</th><th>task</th><th>agent</th><th>model</th>"
        "<th>profile</th><th>outcome</th><th>time</th><th>cost</th><th>tokens</th>"
        f"<th>steps</th><th>sub-runs</th></tr></thead><tbody>{body}</tbody></table></div>"
    )


def all_runs(reports: Reports) -> list[tuple[Experiment, RunRecord]]:
    """Every ended run under the root, with its experiment."""
    return [(e, r) for e in reports.experiments() for r in e.records]
