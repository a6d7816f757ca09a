"""How the lab tests a claim: the evidence methods (`METHODS`), each a registry entry.

A method turns a claim's `TestPlan` into `Evidence`: the units it re-timed (workload
draws, corpus runs) and, per unit, the slow and the fast side's predicted times, plus the
`Retimer` that produced them (for the decomposition). Methods:

- `workload-retime`: `draws` seeded draws of a shipped workload (`tasks/workload/<name>`),
  each re-timed at the slow and the fast setting;
- `corpus-retime`: the shipped corpus's runs (optionally one harness), each turned into its
  exact task shape (`shape_from_trace`) and re-timed likewise; runs without token counts or
  times are counted as untimed, never as 1.0x; the units are grouped by harness
  (`Evidence.groups`: per-harness rows and an equal-weight pooled row, `groups.py`);
- `speculation-bound`: the workload's draws, serial vs every step's tools hidden behind
  its model call: the most any speculative tool execution could save (an upper bound);
- `worked-example`: a source's own arithmetic (`test.example`: N calls of M output
  tokens) re-timed by the lab's timing formula: exact, so its interval is the point;
- `published-outcomes`: two arms' published success, time and cost per task
  (`test.arms`), judged per solved task (`outcomes.py`, through `analysis.choice`):
  exact, the interval is the point; an arm without a published time is not testable;
- `not-testable`: nothing is predicted; the entry's `reason` is the verdict. With
  `test.implied` (and a workload), the lab solves for what the claim implies: the slow
  value of one knob that, cut by the claimed fraction, gives the claimed gain.

All are analytic re-timings (no agent, no server, no sleeping): seconds for every entry; the
implied value's search is kept in the user's cache once made (`kept.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from looplab.bundled import bundled_tasks_dir
from looplab.cache import stored_number
from looplab.claims.implied import implied_value
from looplab.claims.kept import kept
from looplab.claims.knobs import Retimer
from looplab.claims.model import ClaimEntry, TestPlan
from looplab.claims.outcomes import ASSUMES, published_choice
from looplab.errors import ConfigError, LooplabError
from looplab.latency.presets import resolve_profile
from looplab.traces.corpus import list_corpus, load_corpus
from looplab.workloads.model import load_workload
from looplab.workloads.sample import draw_shape
from looplab.workloads.shape import (
    CONTINUE_TOOL,
    StepShape,
    TaskShape,
    ToolShape,
    shape_from_trace,
)

__all__ = ["METHODS", "WORKLOAD_GROUP", "Evidence", "gather", "timed_evidence"]


WORKLOAD_GROUP = "workload "
"""Prefix of a group of workload draws re-timed beside the corpus (a row, not pooled)."""


@dataclass
class Evidence:
    """What a method computed for one claim."""

    what: str
    """The evidence in words (which data, how many units, how timed)."""
    units: list[str] = field(default_factory=list)
    """Unit ids (draw seeds, run ids), paired across the two sides."""
    slow: list[float] = field(default_factory=list)
    """Per unit: the slow side's time (task time, or summed TTFT: the claim's metric)."""
    fast: list[float] = field(default_factory=list)
    """Per unit: the fast side's time."""
    untimed: int = 0
    """Units left out: nothing to re-time."""
    retimer: Retimer | None = None
    """What produced the times (None for `not-testable`)."""
    reason: str | None = None
    """Why nothing could be computed (`not-testable`)."""
    implied: float | None = None
    """`not-testable` with `test.implied`: the solved slow value of the knob (None:
    unreachable within the search)."""
    bound: bool = False
    """The fast side is a best case (an upper bound on the gain), not a prediction."""
    exact: bool = False
    """The times are arithmetic, not a sample (`worked-example`): the interval is the
    point itself."""
    groups: dict[str, list[str]] = field(default_factory=dict)
    """Group (the corpus runs' harness) -> its unit ids; per-group rows when two or more."""

    @property
    def n(self) -> int:
        """Paired units."""
        return len(self.units)


def timed_evidence(
    entry: ClaimEntry,
    retimer: Retimer,
    what: str,
    untimed: int = 0,
    both: dict[str, float] | None = None,
) -> Evidence:
    """Both sides of every shape at the entry's settings, in its metric; `both`: knob
    values set on both sides over the entry's (a break-even search)."""
    plan = entry.test
    extra = both or {}
    slow = retimer.points({**plan.slow, **extra})
    fast = retimer.points({**plan.slow, **plan.fast, **extra})
    attr = "task_s" if entry.claimed.metric == "task" else "ttft_total_s"
    return Evidence(
        what=what,
        units=[s.id for s in retimer.shapes],
        slow=[getattr(p, attr) for p in slow],
        fast=[getattr(p, attr) for p in fast],
        untimed=untimed,
        retimer=retimer,
    )


def _drawn(entry: ClaimEntry, source: str) -> tuple[Retimer, str]:
    """The entry's workload draws and their description."""
    plan = entry.test
    if not plan.workload:
        raise ConfigError(
            f"{plan.method} needs test.workload", source=source, field="test.workload"
        )
    path = bundled_tasks_dir() / "workload" / plan.workload / "workload.yaml"
    model = load_workload(path)
    shapes = [draw_shape(model, seed) for seed in range(plan.draws)]
    what = (
        f"{plan.draws} seeded draws of the shipped workload {plan.workload} "
        f"({model.description}), re-timed analytically on preset {plan.base}"
    )
    return Retimer(shapes, resolve_profile(plan.base)), what


def _workload(entry: ClaimEntry, source: str) -> Evidence:
    retimer, what = _drawn(entry, source)
    return timed_evidence(entry, retimer, what)


@functools.cache
def _corpus_shapes() -> tuple[tuple[str, TaskShape | None], ...]:
    """Every shipped corpus run's harness and exact shape (None: it has no timed shape),
    read and shaped once per process: a full `claims check` asks for the corpus six times
    (~0.8 s of CPU each). Shapes are never changed in place (knobs `model_copy` them)."""
    out: list[tuple[str, TaskShape | None]] = []
    runs = list_corpus()
    for run, trace in zip(runs, load_corpus(runs), strict=True):
        try:
            out.append((run.harness, shape_from_trace(trace)))
        except LooplabError:
            out.append((run.harness, None))
    return tuple(out)


def _corpus(entry: ClaimEntry, source: str) -> Evidence:
    plan = entry.test
    shapes: list[TaskShape] = []
    groups: dict[str, list[str]] = {}
    untimed = 0
    for harness_name, shape in _corpus_shapes():
        if plan.harness not in (None, harness_name):
            continue
        if shape is None:
            untimed += 1
            continue
        shapes.append(shape)
        groups.setdefault(harness_name, []).append(shape.id)
    harness = f"the {plan.harness} runs" if plan.harness else "every run"
    what = (
        f"{harness} of the shipped corpus of public agent runs, each re-timed from its "
        f"exact recorded shape (tokens, tools, harness time) on preset {plan.base}"
    )
    for name in plan.workloads:
        model = load_workload(bundled_tasks_dir() / "workload" / name / "workload.yaml")
        drawn = [draw_shape(model, seed) for seed in range(plan.draws)]
        shapes += drawn
        groups[f"{WORKLOAD_GROUP}{name}"] = [shape.id for shape in drawn]
        what += f"; beside it {plan.draws} draws of the shipped workload {name}"
    evidence = timed_evidence(entry, Retimer(shapes, resolve_profile(plan.base)), what, untimed)
    evidence.groups = groups
    return evidence


def _worked_example(entry: ClaimEntry, source: str) -> Evidence:
    """The source's own arithmetic: one task of `calls` identical calls (`output_tokens`
    each, no prompt to prefill, no tools) re-timed by the lab's timing formula."""
    example = entry.test.example
    if example is None:
        raise ConfigError("worked-example needs test.example", source=source, field="test.example")
    last = example.calls - 1
    steps = [
        StepShape(
            output_tokens=example.output_tokens,
            reasoning_tokens=0,
            tools=[ToolShape(name=CONTINUE_TOOL, seconds=0.0)] if i < last else [],
        )
        for i in range(example.calls)
    ]
    shape = TaskShape(id="worked-example", source=f"claim {entry.name}", steps=steps)
    retimer = Retimer([shape], resolve_profile(entry.test.base))
    evidence = timed_evidence(entry, retimer, "")
    evidence.what = (
        f"the source's task ({example.calls} calls of {example.output_tokens} output tokens, "
        f"no tools) re-timed by the lab's timing formula on preset {entry.test.base}: "
        f"{evidence.slow[0]:.1f} s slow, {evidence.fast[0]:.1f} s fast"
    )
    evidence.exact = True
    return evidence


def _speculation_bound(entry: ClaimEntry, source: str) -> Evidence:
    """The best any tool speculation could do: each step's tools hidden wholly behind its
    model call (step time max(model, tools) + other instead of their sum), on the
    workload's draws at the slow setting: slow = serial, fast = that bound."""
    retimer, what = _drawn(entry, source)
    steps = retimer.steps(entry.test.slow)
    serial = [sum(m + t + o for m, t, o in task) for task in steps]
    hidden = [sum(max(m, t) + o for m, t, o in task) for task in steps]
    what = what.replace(
        ", re-timed analytically",
        ", each step's tools hidden behind "
        "its model call (perfect speculation, an upper bound), re-timed analytically",
    )
    units = [shape.id for shape in retimer.shapes]
    return Evidence(what, units, serial, hidden, retimer=retimer, bound=True)


def _not_testable(entry: ClaimEntry, source: str) -> Evidence:
    if not entry.test.reason:
        raise ConfigError("not-testable needs test.reason", source=source, field="test.reason")
    plan = entry.test
    if plan.implied is None:
        return Evidence(what="nothing computed", reason=plan.reason)
    retimer, what = _drawn(entry, source)
    implied = plan.implied
    value = kept(
        entry,
        "implied",
        lambda: implied_value(retimer, plan, entry.claimed, implied),
        _implied_from_json,
    )
    return Evidence(
        what=f"{what}; solved for what the claim implies",
        units=[shape.id for shape in retimer.shapes],
        retimer=retimer,
        reason=plan.reason,
        implied=value,
    )


def _implied_from_json(raw: Any) -> float | None:
    """A kept implied value (`kept.py`): a number or null.

    Raises:
        TypeError: anything else.
    """
    return None if raw is None else stored_number(raw, "implied")


def _published(entry: ClaimEntry, source: str) -> Evidence:
    """Time per solved task of the two published arms: slow = B's, fast = A's."""
    try:
        read = published_choice(entry.test.arms, entry.test.tries)
    except ValueError as exc:
        raise ConfigError(str(exc), source=source, field="test.arms") from exc
    what = f"{read.what} (assumes: {'; '.join(ASSUMES)})"
    if read.untimed:
        names = " or ".join(read.untimed)
        why = f"no time per task published for {names} (cost per solved task below)"
        return Evidence(what=what, reason=why)
    a, b = read.choice.row("A only"), read.choice.row("B only")
    if a.time_per_solved_s is None or b.time_per_solved_s is None:
        return Evidence(what=what, reason="an arm solves nothing: no time per solved task")
    return Evidence(what, ["published"], [b.time_per_solved_s], [a.time_per_solved_s], exact=True)


Method = Callable[[ClaimEntry, str], Evidence]

METHODS: dict[str, Method] = {
    "workload-retime": _workload,
    "corpus-retime": _corpus,
    "speculation-bound": _speculation_bound,
    "not-testable": _not_testable,
    "worked-example": _worked_example,
    "published-outcomes": _published,
}
"""Evidence method name -> what computes it (a new method joins with one line)."""


def gather(entry: ClaimEntry, source: str = "") -> Evidence:
    """The evidence for `entry` by its method.

    Args:
        entry: the claim.
        source: where the entry came from, for error messages.

    Raises:
        ConfigError: an unknown method (listing the allowed ones) or one missing its input.
    """
    plan: TestPlan = entry.test
    method = METHODS.get(plan.method)
    if method is None:
        raise ConfigError(
            f"unknown test method {plan.method!r}",
            source=source or entry.name,
            field="test.method",
            allowed=list(METHODS),
            given=plan.method,
        )
    return method(entry, source or entry.name)
