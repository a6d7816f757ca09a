"""The knobs a claim's slow and fast sides are made of, and the re-timing that prices them.

A setting is a value per knob (`KNOBS`; unset knobs keep their neutral value). Profile
knobs change the latency profile every call is timed with; shape knobs change the task
shapes (the steps a run is made of) before they are timed. `Retimer.points` re-times each
shape at a setting with the one re-timing function, `looplab.analysis.retime.sweep_trace`
(each shape's trace read once per shape setting, `sweep_base`, and re-timed per profile)
(model calls from their token counts via `backends.timing`; tools and harness time as the
shape says) — analytic, milliseconds per shape, so 2^k settings for a Shapley
decomposition cost seconds at most.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from looplab.analysis.retime import (
    SweepBase,
    SweepPoint,
    profile_model_timing,
    sweep_base,
    sweep_points,
)
from looplab.latency.profile import LatencyProfile
from looplab.latency.spec import profile_ttft
from looplab.workloads.shape import StepShape, TaskShape, shape_trace

__all__ = ["KNOBS", "Knob", "Retimer", "StepTime", "neutral_setting"]


def _scale_reasoning(shape: TaskShape, factor: float) -> TaskShape:
    steps = [
        s.model_copy(update={"reasoning_tokens": round(s.reasoning_tokens * factor)})
        if s.reasoning_tokens
        else s
        for s in shape.steps
    ]
    return shape.model_copy(update={"steps": steps})


def _keep_steps(shape: TaskShape, share: float) -> TaskShape:
    """The first `share` of the steps (at least one): a task finished in fewer steps."""
    kept = max(1, round(len(shape.steps) * share))
    return shape.model_copy(update={"steps": shape.steps[:kept]})


def _scale_cache(shape: TaskShape, factor: float) -> TaskShape:
    def step(s: StepShape) -> StepShape:
        if s.cached_tokens is None:
            return s
        return s.model_copy(update={"cached_tokens": round(s.cached_tokens * factor)})

    return shape.model_copy(update={"steps": [step(s) for s in shape.steps]})


ShapeFn = Callable[[TaskShape, float], TaskShape]


class StepTime(NamedTuple):
    """One step's parts, seconds."""

    model_s: float
    tool_s: float
    other_s: float


@dataclass(frozen=True)
class Knob:
    """One factor a slow and a fast side can differ in."""

    name: str
    label: str
    """The factor's name in a decomposition (`decode rate`)."""
    help: str
    """What the value means, with its unit."""
    neutral: float | None
    """The value when unset (None: the base profile's own value)."""
    profile_field: str | None = None
    """A profile knob: the `LatencyProfile` field it sets."""
    shape: ShapeFn | None = None
    """A shape knob: how a value changes a task shape (skipped at `neutral`)."""


KNOBS: dict[str, Knob] = {
    k.name: k
    for k in (
        Knob("decode_tps", "decode rate", "tokens/s of one stream", None, "decode_tps"),
        Knob("ttft_s", "TTFT", "fixed per-call time to first token, s", None, "ttft_s"),
        Knob("prefill_tps", "prefill", "uncached prompt tokens/s", None, "prefill_tps"),
        Knob(
            "overhead_s",
            "per-call API overhead",
            "per-call API overhead of an HTTP call, added to TTFT (request_overhead_s), s",
            None,
            "request_overhead_s",
        ),
        Knob(
            "reasoning_scale",
            "hidden reasoning",
            "multiplier on each step's hidden reasoning tokens",
            1.0,
            shape=_scale_reasoning,
        ),
        Knob(
            "tool_scale",
            "tools",
            "multiplier on tool time",
            1.0,
            shape=lambda s, f: s.scaled(tool_scale=f),
        ),
        Knob(
            "harness_scale",
            "harness/other",
            "multiplier on harness/other time per step",
            1.0,
            shape=lambda s, f: s.scaled(other_scale=f),
        ),
        Knob("steps_share", "number of steps", "share of the steps kept", 1.0, shape=_keep_steps),
        Knob(
            "cache_share",
            "cache hits",
            "multiplier on prompt tokens served from the prefix cache (0: no cache)",
            1.0,
            shape=_scale_cache,
        ),
    )
}
"""Every knob by name, in the order decompositions list them."""


def neutral_setting(base: LatencyProfile) -> dict[str, float]:
    """Every knob at its neutral value (profile knobs at `base`'s; no prefill: infinite)."""
    values: dict[str, float] = {}
    for knob in KNOBS.values():
        if knob.neutral is not None:
            values[knob.name] = knob.neutral
        else:
            assert knob.profile_field is not None  # every knob without a neutral is one
            value = getattr(base, knob.profile_field)
            values[knob.name] = math.inf if value is None else float(value)
    return values


class Retimer:
    """Re-times a fixed set of task shapes at any setting (module docstring)."""

    def __init__(self, shapes: Sequence[TaskShape], base: LatencyProfile) -> None:
        """Args: shapes: the units (workload draws, corpus runs); base: the profile every
        setting starts from."""
        self.shapes = list(shapes)
        self.base = base
        self._traces: dict[tuple[float, ...], list[SweepBase]] = {}

    def _shaped(self, values: Mapping[str, float]) -> list[SweepBase]:
        """Each shape's trace at the shape knobs of `values`, read for re-timing (kept per
        shape setting: a profile knob re-times the same traces)."""
        knobs = [k for k in KNOBS.values() if k.shape is not None]
        key = tuple(values[k.name] for k in knobs)
        if key not in self._traces:
            out = []
            for shape in self.shapes:
                for knob in knobs:
                    if knob.shape is not None and values[knob.name] != knob.neutral:
                        shape = knob.shape(shape, values[knob.name])
                out.append(sweep_base(shape_trace(shape)))
            self._traces[key] = out
        return self._traces[key]

    def _profile(self, values: Mapping[str, float]) -> LatencyProfile:
        """The base profile with every profile knob set (no prefill for an infinite one)."""
        update: dict[str, float | None] = {}
        for knob in KNOBS.values():
            if knob.profile_field:
                value = values[knob.name]
                update[knob.profile_field] = None if math.isinf(value) else value
        return self.base.model_copy(update=update)

    def points(self, setting: Mapping[str, float]) -> list[SweepPoint]:
        """Each shape's predicted totals at `setting` (knob -> value; unset: neutral)."""
        values = {**neutral_setting(self.base), **setting}
        profile = self._profile(values)
        rate, ttft = profile.decode_tps, profile_ttft(profile)
        assert ttft is not None  # the TTFT knob always sets a number (`neutral_setting`)
        return [sweep_points(t, [rate], [ttft], profile)[0] for t in self._shaped(values)]

    def steps(self, setting: Mapping[str, float]) -> list[list[StepTime]]:
        """Each shape's steps at `setting`: model time (from the one timing function,
        `profile_model_timing`), tools phase and other time, per step."""
        values = {**neutral_setting(self.base), **setting}
        timing = profile_model_timing(self._profile(values))
        out: list[list[StepTime]] = []
        for shaped in self._shaped(values):
            trace = shaped.trace
            model: dict[int, float] = {}
            for call in trace.model_calls():
                new = timing(call)
                spent = 0.0 if new is None else new.ttft_s + new.reasoning_s + new.decode_s
                model[call.step or 0] = model.get(call.step or 0, 0.0) + spent
            out.append(
                [
                    StepTime(model.get(s.step or 0, 0.0), s.tool_s, s.overhead_s)
                    for s in trace.steps()
                ]
            )
        return out
