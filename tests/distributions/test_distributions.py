"""Distributions: one home, one meaning per spelling (issue 24, item 4)."""

from __future__ import annotations

import random

import pytest
from pydantic import TypeAdapter, ValidationError

from looplab.distributions import (
    Distribution,
    Empirical,
    Fixed,
    Mixture,
    WorkloadDistribution,
)
from looplab.stats.order import ks_one_sample

PROFILE: TypeAdapter[Distribution] = TypeAdapter(Distribution)
WORKLOAD: TypeAdapter[WorkloadDistribution] = TypeAdapter(WorkloadDistribution)


@pytest.mark.parametrize("spelling", [3, 3.0, {"value": 3}, {"kind": "fixed", "value": 3}])
def test_a_bare_number_is_fixed_in_profiles_and_workloads(spelling: object) -> None:
    """The same spelling parses to the same `fixed` distribution on both sides."""
    assert PROFILE.validate_python(spelling) == Fixed(value=3)
    assert WORKLOAD.validate_python(spelling) == Fixed(value=3)


def test_fixed_has_the_cdf_a_workload_fit_needs() -> None:
    """A point mass: CDF steps at its value, every quantile is it, KS against itself is 0."""
    point = Fixed(value=2.5)
    assert (point.cdf(2.4), point.cdf(2.5), point.cdf_left(2.5), point.cdf_left(2.6)) == (
        0.0,
        1.0,
        0.0,
        1.0,
    )
    assert point.quantile(0.1) == point.quantile(0.9) == 2.5
    assert ks_one_sample([2.5] * 10, point.cdf, point.cdf_left) == 0.0


def test_a_mixture_takes_a_bare_number_as_a_fixed_component() -> None:
    """A hand-written tail beside a fixed body draws both, in their weights, under a seed."""
    mixture = WORKLOAD.validate_python(
        {
            "kind": "mixture",
            "components": [
                {"weight": 3, "distribution": 1},
                {
                    "weight": 1,
                    "distribution": {
                        "kind": "empirical",
                        "probabilities": [0, 1],
                        "values": [10, 20],
                    },
                },
            ],
        }
    )
    assert isinstance(mixture, Mixture)
    assert isinstance(mixture.components[1].distribution, Empirical)
    draws = [mixture.sample(random.Random(seed)) for seed in range(400)]
    ones = sum(1 for d in draws if d == 1.0)
    assert 250 < ones < 350 and all(d == 1.0 or 10 <= d <= 20 for d in draws)
    assert mixture.mean() == pytest.approx(0.75 * 1 + 0.25 * 15)


def test_workloads_refuse_kinds_without_a_cdf() -> None:
    """A workload parameter needs a CDF for its fit score: `normal` is refused, naming the
    allowed kinds; profiles take it."""
    normal = {"kind": "normal", "mean": 1, "std": 0.1}
    PROFILE.validate_python(normal)
    with pytest.raises(ValidationError, match="empirical"):
        WORKLOAD.validate_python(normal)
