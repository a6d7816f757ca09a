"""Seeded distributions: one home, one meaning per spelling.

In YAML a distribution is a bare number or a mapping tagged by `kind`. A bare number
`x` (or `{value: x}`) is always `{kind: fixed, value: x}`, wherever it appears.

| kind          | fields                                 | sample                           |
|---------------|----------------------------------------|----------------------------------|
| `fixed`       | `value`                                | always `value`                   |
| `uniform`     | `low`, `high`                          | uniform on [low, high]           |
| `normal`      | `mean`, `std` (`min`, default 0)       | Gaussian, clipped at `min`       |
| `lognormal`   | `median`, `sigma`                      | `median * exp(sigma * N(0,1))`   |
| `exponential` | `mean`                                 | exponential with that mean       |
| `empirical`   | `probabilities`, `values`              | quantile knots, linear between   |
| `categorical` | `values`, `weights`                    | these values, these weights      |
| `mixture`     | `components: [{weight, distribution}]` | a component by weight, then draw |

Latency profiles (`backends`) take a `Distribution`: any kind. Workload models take a
`WorkloadDistribution`: the kinds with a CDF and quantiles (`fixed`, `empirical`,
`categorical`, `mixture`), which `looplab calibrate` fits and scores with a KS distance.
Every draw comes from a caller-owned `random.Random`, so a seed fixes every draw.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field

from looplab.distributions.empirical import Categorical, Empirical, Mixture, MixtureComponent
from looplab.distributions.parametric import (
    Exponential,
    Fixed,
    LogNormal,
    Normal,
    Uniform,
    number_is_fixed,
    rate_factor,
)

__all__ = [
    "Categorical",
    "Distribution",
    "Empirical",
    "Exponential",
    "Fixed",
    "LogNormal",
    "Mixture",
    "MixtureComponent",
    "Normal",
    "Uniform",
    "WorkloadDistribution",
    "rate_factor",
]

Distribution = Annotated[
    Fixed | Uniform | Normal | LogNormal | Exponential | Empirical | Categorical | Mixture,
    Field(discriminator="kind"),
    BeforeValidator(number_is_fixed),
]
"""Any distribution above; a bare number is `fixed`."""

WorkloadDistribution = Annotated[
    Fixed | Empirical | Categorical | Mixture,
    Field(discriminator="kind"),
    BeforeValidator(number_is_fixed),
]
"""A distribution with a CDF and quantiles; a bare number is `fixed`."""
