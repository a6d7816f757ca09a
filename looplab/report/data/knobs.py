"""The knob table: what each latency knob saved, per backend, against all knobs off.

Runs of an experiment with axes or variants (`looplab.experiments.axes`) carry their
variant in the trace header. Per backend, the reference is the all-off variant (every
axis at its lowest value: `false`, the smallest number); every other variant is labelled
by the axes where it differs from it (`streaming_dispatch`, `all-on` when it differs in
every axis) and compared over the tasks both ran:

- saving per task: `1 - median(variant) / median(all-off)` of task times, its 95% CI from
  the one CI rule (`stats.intervals.speedup_ci`: BCa, tasks as clusters, from 6 tasks);
- saving end to end: the same on setup + task (`run_end.end_to_end_s`; task + sandbox
  start for older traces), where `eager_sandbox` shows (it overlaps the setup, which task
  time leaves out);
- saving per step: the mean over tasks of `(all-off - variant) / all-off steps`, seconds,
  with a paired bootstrap 95% CI over tasks;
- where the time went: model and tool shares of the variant's summed task time, and what
  the knobs did (`run_end.knob_stats`: streamed calls, speculation hits and misses).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from looplab.report.data.records import RunRecord
from looplab.stats.intervals import median, quantile, speedup_ci

__all__ = ["KnobRow", "knob_rows", "variant_labels", "variant_of"]

BOOTSTRAP_RESAMPLES = 1000


@dataclass(frozen=True)
class KnobRow:
    """One variant at one backend, against that backend's all-off runs."""

    backend: str
    decode_tps: float | None
    label: str
    tasks: int
    median_task_s: float
    saving: float | None
    """Share of task time saved (0.08 = 8 %), None for the reference row."""
    saving_ci: tuple[float, float] | None
    step_saving_s: float | None
    step_ci: tuple[float, float] | None
    model_share: float
    tool_share: float
    stats: dict[str, float]
    """Summed `knob_stats` over the variant's runs."""
    median_e2e_s: float | None = None
    """Median end to end (setup + task), None when no run recorded it."""
    e2e_saving: float | None = None
    """Share of end-to-end time saved: what `eager_sandbox` shortens (task time excludes
    the setup it overlaps)."""
    e2e_ci: tuple[float, float] | None = None


def variant_of(record: RunRecord) -> dict[str, Any]:
    """The run's axis values (empty for a run without axes)."""
    if record.trace is None:
        return {}
    return dict(record.trace.header.cell.variant or {})


def _key(variant: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, repr(v)) for k, v in variant.items()))


def _label(variant: dict[str, Any], base: dict[str, Any]) -> str:
    differs = [p for p in sorted(variant) if variant[p] != base.get(p)]
    if not differs:
        return "all-off"
    if len(differs) == len(variant) and len(differs) > 1:
        return "all-on"
    return "+".join(p.rsplit(".", 1)[-1] for p in differs)


def _base(variants: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The all-off variant: each axis at its lowest value."""
    seen = list(variants)
    paths = sorted({p for v in seen for p in v})
    return {p: min((v[p] for v in seen if p in v), key=_order) for p in paths}


def variant_labels(records: Sequence[RunRecord]) -> dict[str, str]:
    """Run id -> its variant's label (`all-off`, `streaming_dispatch`, `all-on`, ...), for
    runs with axes."""
    variants = {r.run_id: v for r in records if (v := variant_of(r))}
    base = _base(variants.values())
    return {run_id: _label(v, base) for run_id, v in variants.items()}


def knob_rows(records: Sequence[RunRecord]) -> list[KnobRow]:
    """Rows per backend (slowest decode first), all-off first; [] without variants."""
    runs = [(r, variant_of(r)) for r in records if r.complete]
    runs = [(r, v) for r, v in runs if v]
    if not runs:
        return []
    base = _base(v for _, v in runs)
    by_backend: dict[str, dict[tuple[tuple[str, str], ...], list[RunRecord]]] = defaultdict(
        lambda: defaultdict(list)
    )
    variants: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
    for record, variant in runs:
        by_backend[record.profile][_key(variant)].append(record)
        variants[_key(variant)] = variant
    rows: list[KnobRow] = []
    backends = sorted(by_backend, key=lambda b: (_rate(by_backend[b].values()), b))
    for backend in backends:
        groups = by_backend[backend]
        reference = groups.get(_key(base), [])
        order = sorted(groups, key=lambda k: (k != _key(base), _label(variants[k], base)))
        for key in order:
            label = _label(variants[key], base)
            rows.append(_row(backend, label, groups[key], reference, key == _key(base)))
    return rows


def _order(value: Any) -> tuple[int, Any]:
    """Orders axis values: `false` before `true`, smaller numbers first, None first."""
    if value is None:
        return (0, 0)
    if isinstance(value, bool | int | float):
        return (1, float(value))
    return (2, str(value))


def _rate(groups: Iterable[list[RunRecord]]) -> float:
    return min((r.decode_tps or 0.0) for records in groups for r in records)


def _by_task(records: Sequence[RunRecord]) -> dict[str, list[RunRecord]]:
    """Runs by task, failed ones left out (`RunRecord.outcome`): a failed or crashed run
    never feeds a saving."""
    out: dict[str, list[RunRecord]] = defaultdict(list)
    for record in records:
        if record.outcome != "failed":
            out[record.task].append(record)
    return out


def _row(
    backend: str,
    label: str,
    records: list[RunRecord],
    reference: list[RunRecord],
    is_reference: bool,
) -> KnobRow:
    mine, theirs = _by_task(records), _by_task(reference)
    shared = sorted(set(mine) & set(theirs))
    total = sum(r.task_s for r in records) or 1.0
    stats: dict[str, float] = defaultdict(float)
    for record in records:
        end = record.trace.end if record.trace is not None else None
        for name, value in (end.knob_stats if end is not None else {}).items():
            stats[name] += value
    saving = saving_ci = step_saving = step_ci = e2e_saving = e2e_ci = None
    if not is_reference and shared:
        base_times = {t: [r.task_s for r in theirs[t]] for t in shared}
        times = {t: [r.task_s for r in mine[t]] for t in shared}
        saving, saving_ci = _saving(base_times, times)
        e2e_saving, e2e_ci = _saving(
            {t: _e2e(theirs[t]) for t in shared}, {t: _e2e(mine[t]) for t in shared}
        )
        per_step = {
            t: (median(base_times[t]) - median(times[t]))
            / max(1.0, median([float(r.steps) for r in theirs[t]]))
            for t in shared
        }
        step_saving = sum(per_step.values()) / len(per_step)
        step_ci = _mean_ci(list(per_step.values()))
    return KnobRow(
        backend=backend,
        decode_tps=records[0].decode_tps,
        label=label,
        tasks=len(mine),
        median_task_s=median([r.task_s for r in records]),
        saving=saving,
        saving_ci=saving_ci,
        step_saving_s=step_saving,
        step_ci=step_ci,
        model_share=sum(r.model_s for r in records) / total,
        tool_share=sum(r.tool_s for r in records) / total,
        stats=dict(stats),
        median_e2e_s=median(ends) if (ends := _e2e(records)) else None,
        e2e_saving=e2e_saving,
        e2e_ci=e2e_ci,
    )


def _e2e(records: Sequence[RunRecord]) -> list[float]:
    """End-to-end (setup + task) seconds of the runs that recorded them: `end_to_end_s`,
    or task + sandbox start for older traces."""
    out: list[float] = []
    for record in records:
        end = record.trace.end if record.trace is not None else None
        if end is not None and end.end_to_end_s is not None:
            out.append(end.end_to_end_s)
        elif record.sandbox_start_s is not None:
            out.append(record.task_s + record.sandbox_start_s)
    return out


def _saving(
    base_times: dict[str, list[float]], times: dict[str, list[float]]
) -> tuple[float | None, tuple[float, float] | None]:
    """`1 - median(times) / median(base)` pooled over tasks, with its paired 95% CI."""
    base_times = {t: v for t, v in base_times.items() if v and times.get(t)}
    times = {t: times[t] for t in base_times}
    if not base_times:
        return None, None
    pooled_base = median([x for v in base_times.values() for x in v])
    pooled = median([x for v in times.values() for x in v])
    saving = 1 - pooled / pooled_base if pooled_base > 0 else None
    ci = speedup_ci(base_times, times)
    return saving, ((1 - 1 / ci[0], 1 - 1 / ci[1]) if ci else None)


def _mean_ci(values: list[float], seed: int = 0) -> tuple[float, float] | None:
    """Bootstrap 95% CI of the mean of per-task values (None under 3 tasks)."""
    if len(values) < 3:
        return None
    rng = random.Random(seed)
    means = [
        sum(rng.choices(values, k=len(values))) / len(values) for _ in range(BOOTSTRAP_RESAMPLES)
    ]
    return quantile(means, 0.025), quantile(means, 0.975)
