"""The workload model format, its distributions, task shapes and seeded draws."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from looplab.analysis.replay import replay_virtual
from looplab.analysis.retime import profile_model_timing, retime_events
from looplab.distributions import Categorical, Empirical, Mixture
from looplab.errors import ConfigError
from looplab.latency.presets import resolve_profile
from looplab.traces.inputs import load_traces
from looplab.traces.io import read_trace
from looplab.workloads.fit import calibrate
from looplab.workloads.model import dump_workload, load_workload
from looplab.workloads.sample import draw_shape
from looplab.workloads.shape import CONTINUE_TOOL, shape_from_trace, shape_trace


def test_model_round_trips_through_yaml(fixtures: Path, tmp_path: Path) -> None:
    """A calibrated model written as YAML loads back equal, provenance included."""
    model = calibrate(load_traces([fixtures / "calibrate"]), "hand").model
    path = tmp_path / "hand.yaml"
    path.write_text(dump_workload(model))
    again = load_workload(path)
    assert again == model
    assert again.parameters.tool_s.provenance.status == "estimated"
    assert "format: looplab-workload-1" in path.read_text()


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda t: t.replace("format: looplab-workload-1", "format: other"), "format"),
        (lambda t: t.replace("description: ''", "descripton: ''"), "descripton"),
        (lambda t: t.replace("status: measured", "status: guessed", 1), "status"),
    ],
)
def test_invalid_model_names_the_field(
    fixtures: Path, tmp_path: Path, edit: object, expected: str
) -> None:
    """A model file with a wrong field is refused with the file and the field named."""
    model = calibrate(load_traces([fixtures / "calibrate"]), "hand").model
    path = tmp_path / "bad.yaml"
    path.write_text(edit(dump_workload(model)))  # type: ignore[operator]
    with pytest.raises(ConfigError) as error:
        load_workload(path)
    assert str(path) in str(error.value) and expected in str(error.value)


def test_distribution_shapes_validate() -> None:
    """Knots must increase, weights be positive, and an absent parameter has no distribution."""
    from pydantic import ValidationError

    from looplab.workloads.model import Parameter, Provenance

    with pytest.raises(ValidationError, match="must not decrease"):
        Empirical(probabilities=[0, 0.5, 1], values=[1, 3, 2])
    with pytest.raises(ValidationError, match="start at 0"):
        Empirical(probabilities=[0.1, 1], values=[1, 2])
    with pytest.raises(ValidationError, match="positive"):
        Categorical(values=[1, 2], weights=[1, 0])
    with pytest.raises(ValidationError, match="absent"):
        Parameter(distribution=None, provenance=Provenance(status="measured"))


def test_empirical_quantiles_cdf_and_draws_agree() -> None:
    """Inverse CDF, CDF and seeded draws of an empirical distribution are consistent."""
    knots = Empirical(probabilities=[0, 0.5, 0.9, 1], values=[0, 1, 10, 100])
    assert knots.quantile(0.5) == 1 and knots.quantile(0.95) == pytest.approx(55)
    assert knots.cdf(5.5) == pytest.approx(0.7) and knots.cdf(-1) == 0 and knots.cdf(100) == 1
    draws = [knots.sample(random.Random(seed)) for seed in range(4000)]
    assert sum(d > 10 for d in draws) / len(draws) == pytest.approx(0.1, abs=0.02)
    assert knots.mean() == pytest.approx(0.25 + 2.2 + 5.5)


def test_categorical_and_mixture() -> None:
    """A categorical draws its values by weight; a mixture's CDF and quantile invert."""
    counts = Categorical(values=[0, 1, 2], weights=[1, 2, 1])
    rng = random.Random(1)
    draws = [counts.sample(rng) for _ in range(4000)]
    assert set(draws) == {0, 1, 2}
    assert draws.count(1) / len(draws) == pytest.approx(0.5, abs=0.03)
    assert counts.cdf(1) == 0.75 and counts.cdf_left(1) == 0.25
    mixture = Mixture.model_validate(
        {
            "components": [
                {"weight": 0.96, "distribution": {"kind": "empirical", "probabilities": [0, 1],
                                                   "values": [0.1, 60]}},
                {"weight": 0.04, "distribution": {"kind": "empirical", "probabilities": [0, 1],
                                                   "values": [60, 600]}},
            ]
        }
    )  # fmt: skip
    assert mixture.cdf(60) == pytest.approx(0.96)
    assert mixture.quantile(0.98) == pytest.approx(330, rel=1e-3)


def test_shape_of_a_trace_retimes_like_the_trace(fixtures: Path) -> None:
    """Degenerate case: re-timing a trace's exact shape predicts what re-timing the trace does."""
    for path in sorted(fixtures.rglob("*.jsonl")):
        trace = read_trace(path)
        shape = shape_from_trace(trace)
        assert len(shape.steps) == len(trace.model_calls())
        for name in ("slow-80", "fast-750"):
            profile = resolve_profile(name)
            direct = replay_virtual(trace, profile).end
            via_shape = retime_events(
                shape_trace(shape).events, profile_model_timing(profile), "test"
            )[-1]
            assert direct is not None
            assert via_shape.end == pytest.approx(direct.end, abs=1e-4), path.name


def test_shape_keeps_recorded_tokens_tools_and_cache(fixtures: Path) -> None:
    """A TraceLab session's shape has its reasoning, cache misses, failed call and tools."""
    trace = read_trace(fixtures / "imported" / "tracelab-codex.jsonl")
    shape = shape_from_trace(trace)
    calls = trace.model_calls()
    assert [s.reasoning_tokens for s in shape.steps] == [c.reasoning_tokens for c in calls]
    assert [s.cached_tokens for s in shape.steps] == [c.cached_tokens for c in calls]
    assert [s.output_tokens for s in shape.steps] == [
        (c.completion_tokens or 0) - (c.reasoning_tokens or 0) for c in calls
    ]
    assert [t.name for t in shape.steps[0].tools] == ["exec_command"] * 3
    assert [t.ok for t in shape.steps[0].tools] == [True, False, True]
    steps = trace.steps()
    for step, recorded in zip(shape.steps, steps, strict=True):
        if step.tools and step.tools[0].name != CONTINUE_TOOL:
            assert step.tool_s == pytest.approx(recorded.tool_s, abs=1e-5)


def test_draws_are_seeded_and_follow_the_rules(fixtures: Path) -> None:
    """The same seed draws the same shape; prompts grow by at least the reply; caches fit."""
    model = calibrate(load_traces([fixtures / "imported"]), "mixed").model
    first, again, other = draw_shape(model, 7), draw_shape(model, 7), draw_shape(model, 8)
    assert first == again and first != other
    for seed in range(40):
        shape = draw_shape(model, seed)
        for previous, step in zip(shape.steps, shape.steps[1:], strict=False):
            assert step.prompt_tokens is not None and previous.prompt_tokens is not None
            assert step.prompt_tokens >= previous.prompt_tokens + previous.output_tokens + 8
            assert step.cached_tokens is not None and step.cached_tokens <= previous.prompt_tokens
        for step in shape.steps[:-1]:
            assert step.tools, "only the last step may go without a tool call"
        assert shape.steps[0].cached_tokens == 0


def test_a_model_without_output_tokens_cannot_be_drawn(fixtures: Path) -> None:
    """Drawing needs output tokens: an absent one is a ConfigError naming the parameter."""
    model = calibrate(load_traces([fixtures / "calibrate"]), "hand").model
    absent = model.parameters.output_tokens.model_copy(update={"distribution": None})
    absent.provenance.status = "absent"
    broken = model.model_copy(
        update={"parameters": model.parameters.model_copy(update={"output_tokens": absent})}
    )
    with pytest.raises(ConfigError, match="output_tokens"):
        draw_shape(broken, 0)
