"""The report's data as tables and JSON: what the page embeds for its interactive layer and
its CSV/JSON downloads, and what `looplab report --format json` prints.

Every chart and table of the page has an export table here under its name (`data-chart`
or `data-export`): `{"title", "columns", "rows"}`, one row per drawn value. Timelines
and icicles are embedded once, compactly (`timeline_data`, `flame_data`); the page
derives their downloads from them. Non-finite numbers become null (JSON has no NaN).
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any, TypeVar, cast

from looplab.report.claims.rows import claim_json
from looplab.report.data.steps import PHASES
from looplab.report.render.gantt import lane_marks, lanes, row_label
from looplab.report.views.choice import choice_json
from looplab.report.views.diff import DiffView
from looplab.report.views.report_model import ReportModel
from looplab.report.views.runs import FlameNode

__all__ = [
    "diff_table",
    "export_tables",
    "finite",
    "flame_data",
    "report_json",
    "timeline_data",
]

Table = dict[str, Any]
T = TypeVar("T")


def finite(value: T) -> T:
    """`value` with every non-finite float replaced by None (recursively; tuples become
    lists, as JSON has them)."""
    return cast(T, _finite(value))


def _finite(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _table(title: str, columns: list[str], rows: list[list[Any]]) -> Table:
    return {"title": title, "columns": columns, "rows": rows}


def _r(value: float | None, digits: int = 6) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}")


def export_tables(model: ReportModel) -> dict[str, Table]:
    """Every chart's and table's data, by its name on the page."""
    tables: dict[str, Table] = {"headline": _headline(model)}
    curve = ["group", "x", "median", "p25", "p75", "n"]
    tables["compounding"] = _table(
        "cumulative time by step (s)",
        curve,
        [
            [g, p.x, _r(p.median), _r(p.low), _r(p.high), p.n]
            for g, points in model.compounding.items()
            for p in points
        ],
    )
    for index, family in enumerate(model.families):
        tables[f"family-{index}"] = _table(
            f"task time vs {family.name} size",
            curve,
            [
                [g, p.x, _r(p.median), _r(p.low), _r(p.high), p.n]
                for g, points in family.series.items()
                for p in points
            ],
        )
    tables["length"] = _table(
        "task time vs steps, every run",
        ["group", "task", "steps", "task_s"],
        [[g, t, x, _r(y)] for g, points in model.length_points.items() for x, y, t in points],
    )
    keys = list(next(iter(model.breakdown_groups.values()), {}))
    tables["breakdown-groups"] = _table(
        "mean seconds per run by component",
        ["group", *keys],
        [[g, *(_r(parts[k]) for k in keys)] for g, parts in model.breakdown_groups.items()],
    )
    tables["breakdown-tasks"] = _table(
        "mean seconds per run by component and task",
        ["task", "group", *keys],
        [[t, g, *(_r(parts[k]) for k in keys)] for t, g, parts in model.breakdown_tasks],
    )
    tables.update(_steps(model))
    tables.update(_sensitivity(model))
    tables.update(_per_run(model))
    return tables


def _headline(model: ReportModel) -> Table:
    columns = [
        "group",
        "decode_tps",
        "runs",
        "solved",
        "checked",
        "median_task_s",
        "p90_task_s",
        "median_steps",
        "model_share",
        "tool_share",
        "overhead_share",
        "speedup",
        "ci_low",
        "ci_high",
        "clocks",
        "estimated",
    ]
    rows = [
        [
            g.label,
            g.decode_tps,
            g.runs,
            g.solved,
            g.checked,
            _r(g.median_task_s),
            _r(g.p90_task_s),
            g.median_steps,
            _r(g.model_share),
            _r(g.tool_share),
            _r(g.overhead_share),
            _r(g.speedup),
            _r(g.ci[0]) if g.ci else None,
            _r(g.ci[1]) if g.ci else None,
            " ".join(g.clocks),
            " ".join(g.estimated),
        ]
        for g in model.groups
    ]
    return _table("headline per group (matched cells)", columns, rows)


def _steps(model: ReportModel) -> dict[str, Table]:
    tables: dict[str, Table] = {}
    view = model.step_latency
    if view is not None:
        for by, curves in (("step", view.by_step), ("context", view.by_context)):
            tables[f"step-latency-{by}"] = _table(
                f"model call time per step vs {by}",
                ["group", by, "median_s", "p25_s", "p75_s", "n"],
                [
                    [g, _r(p.x), _r(p.median), _r(p.low), _r(p.high), p.n]
                    for g, points in curves.items()
                    for p in points
                ],
            )
    tables["slowdown"] = _table(
        "task time split: more steps vs slower steps",
        ["group", "label", "runs", "median_steps", "mean_task_s", "slowdown_s", "share"],
        [
            [r.group, r.label, r.runs, r.steps, _r(r.task_s), _r(r.slowdown_s), _r(r.share)]
            for r in model.slowdown
        ],
    )
    for metric, series in model.distributions.items():
        tables[f"cdf-{metric}"] = _table(
            f"{metric} per call, empirical CDF",
            ["group", "seconds", "fraction"],
            [[g, _r(x), _r(y)] for g, points in series.items() for x, y in points],
        )
    return tables


def _sensitivity(model: ReportModel) -> dict[str, Table]:
    sweep = model.sweep
    if sweep is None:
        return {}
    rows: list[list[Any]] = [
        ["predicted", rate, _r(s), None, None]
        for rate, s in zip(sweep.rates, sweep.speedups, strict=True)
    ]
    rows += [
        [f"measured {g}", rate, _r(s), _r(lo), _r(hi)] for g, rate, s, lo, hi in sweep.measured
    ]
    rows.append(["Amdahl ceiling", None, _r(sweep.ceiling), None, None])
    return {
        "sweep": _table(
            "speedup vs decode rate", ["series", "decode_tps", "speedup", "ci_low", "ci_high"], rows
        ),
        "ttft-sensitivity": _table(
            "predicted median task time vs TTFT base",
            ["group", "decode_tps", "ttft_s", "task_s"],
            [
                [g, rate, t, _r(v)]
                for g, rate, series, _ in sweep.ttft_series
                for t, v in zip(sweep.ttft_grid, series, strict=True)
            ],
        ),
    }


def _per_run(model: ReportModel) -> dict[str, Table]:
    groups = [g.label for g in model.groups]
    tables = {
        "tasks": _table(
            "per task and group",
            ["task", "group", "runs", "median_task_s", "solved", "median_steps", "speedup"],
            [
                [row.task, g, cell[0], _r(cell[1]), cell[2], cell[3], _r(row.speedup)]
                for row in model.tasks
                for g in groups
                if (cell := row.cells.get(g)) is not None
            ],
        ),
        "runs": _table(
            "every run",
            [
                "run_id",
                "group",
                "task",
                "steps",
                "task_s",
                "model_s",
                "tool_s",
                "overhead_s",
                "success",
                "clock",
                "source",
            ],
            [
                [
                    r.run_id,
                    r.group,
                    r.task,
                    r.steps,
                    _r(r.task_s),
                    _r(r.model_s),
                    _r(r.tool_s),
                    _r(r.overhead_s),
                    r.success,
                    r.clock,
                    r.source,
                ]
                for r in model.run_rows
            ],
        ),
    }
    for diff in model.diffs:
        tables[diff.key] = diff_table(diff)
    return tables


def diff_table(diff: DiffView) -> Table:
    """The rows of a step-aligned diff (`views_diff.DiffView`)."""
    columns = ["a_step", "b_step", "tools", "status"]
    columns += [f"delta_{k}_s" for k in PHASES] + ["a_step_s", "b_step_s", "gap_s", "diverged"]
    rows = [
        [
            None if r.a is None else r.a + 1,
            None if r.b is None else r.b + 1,
            r.signature,
            r.status,
            *(_r(r.delta[k]) for k in PHASES),
            _r(r.a_s),
            _r(r.b_s),
            _r(r.gap_s),
            r.diverged,
        ]
        for r in diff.rows
    ]
    return _table(f"step-aligned diff: {diff.a.run_id} vs {diff.b.run_id}", columns, rows)


def timeline_data(model: ReportModel) -> dict[str, Any]:
    """Per run anchor: group, task, time, lanes and bars `[lane, kind, start, end, label,
    estimated]` (the Gantt's data)."""
    out: dict[str, Any] = {}
    for timeline in model.timelines:
        order = lanes(timeline)
        links, critical = lane_marks(timeline, order)
        out[timeline.anchor] = {
            "run": timeline.run_id,
            "group": timeline.group,
            "task": timeline.task,
            "task_s": _r(timeline.task_s),
            "steps": timeline.steps,
            "lanes": order,
            "labels": [row_label(timeline, lane) for lane in order],
            "links": [[k.start, k.end, round(k.at, 4), k.kind] for k in links],
            "critical": critical,
            "bars": [
                [order.index(b.lane), b.kind, round(b.start, 4), round(b.end, 4), b.label]
                + ([1] if b.estimated else [])
                for b in timeline.bars
            ],
        }
    return out


def flame_data(model: ReportModel) -> dict[str, Any]:
    """Per run anchor: its icicle tree `[name, seconds, kind, children]`."""

    def node(n: FlameNode) -> list[Any]:
        return [n.name, _r(n.value, 5), n.kind, [node(c) for c in n.children]]

    return {t.anchor: node(t.flame) for t in model.timelines if t.flame is not None}


def report_json(model: ReportModel) -> dict[str, Any]:
    """The report for scripts: summary, comparability, and every table."""
    data = {
        "title": model.title,
        "inputs": model.inputs,
        "runs": model.runs,
        "sentence": model.sentence,
        "groups": [asdict(g) for g in model.groups],
        "comparability": asdict(model.comparability) if model.comparability else None,
        "notes": model.notes,
        "set_aside": [asdict(s) for s in model.set_aside],
        "tables": export_tables(model),
        "claim": claim_json(model.claim) if model.claim else None,
        "money": asdict(model.money) if model.money else None,
        "caps": asdict(model.caps) if model.caps else None,
        "choice": [choice_json(view) for view in model.choice],
        "success": asdict(model.success) if model.success else None,
        "bottom_lines": [{"text": line.text, **asdict(line)} for line in model.bottom_lines],
    }
    return finite(data)
