"""Parametric distributions: jitter, output lengths, hidden reasoning tokens (profiles).

In YAML a distribution is a bare number (`fixed`) or a mapping tagged by `kind`:

| kind          | fields                  | sample                                           |
|---------------|-------------------------|--------------------------------------------------|
| `fixed`       | `value`                 | always `value`                                   |
| `uniform`     | `low`, `high`           | uniform on [low, high]                           |
| `normal`      | `mean`, `std`           | Gaussian, clipped at `min` (default 0)           |
| `lognormal`   | `median`, `sigma`       | `median * exp(sigma * N(0,1))`, right-skewed     |
| `exponential` | `mean`                  | exponential with that mean (queueing-like jitter) |

All are sampled from a caller-owned `random.Random`, so a seed fixes every draw.
"""

from __future__ import annotations

import math
import random
from typing import Any, Literal

from pydantic import Field, model_validator

from looplab.config import StrictModel

__all__ = [
    "Exponential",
    "Fixed",
    "LogNormal",
    "Normal",
    "Uniform",
    "number_is_fixed",
    "rate_factor",
]


def rate_factor(jitter: float, rng: random.Random) -> float:
    """One request's decode-rate factor: 1 + N(0, jitter), clipped to +-3 jitter (1 when
    `jitter` is 0, drawing nothing)."""
    if not jitter:
        return 1.0
    return 1.0 + max(-3 * jitter, min(3 * jitter, rng.gauss(0.0, jitter)))


class Fixed(StrictModel):
    """Always the same value."""

    kind: Literal["fixed"] = "fixed"
    value: float = Field(ge=0)
    """The value every draw returns."""

    def sample(self, rng: random.Random) -> float:
        """Return `value`."""
        return self.value

    def mean(self) -> float:
        """Expected value."""
        return self.value

    def quantile(self, q: float) -> float:
        """Every quantile is `value`."""
        return self.value

    def cdf(self, x: float) -> float:
        """P(X <= x): a step at `value`."""
        return 1.0 if x >= self.value else 0.0

    def cdf_left(self, x: float) -> float:
        """P(X < x)."""
        return 1.0 if x > self.value else 0.0


class Uniform(StrictModel):
    """Uniform on [low, high]."""

    kind: Literal["uniform"]
    low: float = Field(ge=0)
    """Lower bound (inclusive)."""
    high: float = Field(ge=0)
    """Upper bound (inclusive); must be >= low."""

    @model_validator(mode="after")
    def _ordered(self) -> Uniform:
        if self.high < self.low:
            raise ValueError(f"high ({self.high}) must be >= low ({self.low})")
        return self

    def sample(self, rng: random.Random) -> float:
        """One uniform draw."""
        return rng.uniform(self.low, self.high)

    def mean(self) -> float:
        """Expected value."""
        return (self.low + self.high) / 2


class Normal(StrictModel):
    """Gaussian, clipped below at `min` so times and counts stay non-negative."""

    kind: Literal["normal"]
    mean_: float = Field(alias="mean")
    """Mean."""
    std: float = Field(ge=0)
    """Standard deviation."""
    min: float = 0.0
    """Draws below this are clipped to it."""

    def sample(self, rng: random.Random) -> float:
        """One clipped Gaussian draw."""
        return max(self.min, rng.gauss(self.mean_, self.std))

    def mean(self) -> float:
        """Mean before clipping."""
        return self.mean_


class LogNormal(StrictModel):
    """Right-skewed: `median * exp(sigma * N(0, 1))`; the shape of real output lengths."""

    kind: Literal["lognormal"]
    median: float = Field(gt=0)
    """The median draw."""
    sigma: float = Field(ge=0)
    """Spread in log space (0.5 gives p90 ~ 1.9x median)."""

    def sample(self, rng: random.Random) -> float:
        """One log-normal draw."""
        return self.median * math.exp(self.sigma * rng.gauss(0.0, 1.0))

    def mean(self) -> float:
        """Expected value."""
        return self.median * math.exp(self.sigma**2 / 2)


class Exponential(StrictModel):
    """Exponential with the given mean (memoryless waits, e.g. queueing jitter)."""

    kind: Literal["exponential"]
    mean_: float = Field(alias="mean", gt=0)
    """Mean of the distribution."""

    def sample(self, rng: random.Random) -> float:
        """One exponential draw."""
        return rng.expovariate(1.0 / self.mean_)

    def mean(self) -> float:
        """Expected value."""
        return self.mean_


def number_is_fixed(value: Any) -> Any:
    """YAML's short forms: a bare number, or `{value: x}`, is `{kind: fixed, value: x}`."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"kind": "fixed", "value": value}
    if isinstance(value, dict) and "kind" not in value and set(value) == {"value"}:
        return {"kind": "fixed", **value}
    return value
