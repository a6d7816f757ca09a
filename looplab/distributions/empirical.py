"""Distributions fitted to data: empirical quantiles, categorical, mixtures (workloads).

Real agents' parameters are skewed and heavy-tailed (a few tool calls last minutes and
hold most of the tool time), so a workload never uses a normal. Tagged by `kind`:

| kind          | fields                                 | meaning                             |
|---------------|----------------------------------------|-------------------------------------|
| `empirical`   | `probabilities`, `values`              | quantile knots; linear between them |
| `categorical` | `values`, `weights`                    | exactly these values, these weights |
| `mixture`     | `components: [{weight, distribution}]` | a component by weight, then a draw  |

`empirical` is what `looplab calibrate` fits for continuous quantities: the values at a
fixed grid of probabilities (0 and 1 included, so the observed minimum and maximum are
kept), sampled by inverse CDF with linear interpolation between knots. `categorical` is
what it fits for small counts (steps of short tasks, tool calls per step). A hand-written
heavy tail is a `mixture` of a body and a tail (e.g. 96% of calls from an empirical body
under a minute, 4% from a tail of one to ten minutes).

Every draw comes from a caller-owned `random.Random`, so a seed fixes every draw. Each
distribution also gives its CDF (left and right limits, for the KS distance of a fit),
its quantile function and its mean.
"""

from __future__ import annotations

import bisect
import itertools
import random
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from looplab.config import StrictModel
from looplab.distributions.parametric import Fixed, number_is_fixed

__all__ = [
    "Categorical",
    "Empirical",
    "Mixture",
    "MixtureComponent",
]


class Empirical(StrictModel):
    """Quantile knots: `values[i]` is the `probabilities[i]`-quantile; linear in between."""

    kind: Literal["empirical"] = "empirical"
    probabilities: list[float] = Field(min_length=2)
    """Increasing probabilities from 0 to 1 (both included)."""
    values: list[float] = Field(min_length=2)
    """Non-decreasing values, one per probability."""

    @model_validator(mode="after")
    def _knots(self) -> Empirical:
        p, v = self.probabilities, self.values
        if len(p) != len(v):
            raise ValueError(f"{len(p)} probabilities but {len(v)} values")
        if p[0] != 0.0 or p[-1] != 1.0:
            raise ValueError("probabilities must start at 0 and end at 1")
        if any(b <= a for a, b in itertools.pairwise(p)):
            raise ValueError("probabilities must increase")
        if any(b < a for a, b in itertools.pairwise(v)):
            raise ValueError("values must not decrease")
        return self

    def quantile(self, q: float) -> float:
        """The q-quantile (0..1)."""
        p, v = self.probabilities, self.values
        i = min(max(bisect.bisect_right(p, q) - 1, 0), len(p) - 2)
        share = (q - p[i]) / (p[i + 1] - p[i])
        return v[i] + (v[i + 1] - v[i]) * min(max(share, 0.0), 1.0)

    def cdf(self, x: float) -> float:
        """P(X <= x)."""
        p, v = self.probabilities, self.values
        if x < v[0]:
            return 0.0
        if x >= v[-1]:
            return 1.0
        i = bisect.bisect_right(v, x) - 1
        return p[i] + (p[i + 1] - p[i]) * (x - v[i]) / (v[i + 1] - v[i])

    def cdf_left(self, x: float) -> float:
        """P(X < x) (jumps only where knots share a value)."""
        p, v = self.probabilities, self.values
        if x <= v[0]:
            return 0.0
        if x > v[-1]:
            return 1.0
        i = bisect.bisect_left(v, x)
        if v[i] == x:
            return p[i]
        return p[i - 1] + (p[i] - p[i - 1]) * (x - v[i - 1]) / (v[i] - v[i - 1])

    def sample(self, rng: random.Random) -> float:
        """One draw by inverse CDF."""
        return self.quantile(rng.random())

    def mean(self) -> float:
        """Expected value (the area under the piecewise-linear quantile function)."""
        p, v = self.probabilities, self.values
        return sum((p[i + 1] - p[i]) * (v[i] + v[i + 1]) / 2 for i in range(len(p) - 1))


class Categorical(StrictModel):
    """Exactly these values, drawn with these (relative) weights."""

    kind: Literal["categorical"] = "categorical"
    values: list[float] = Field(min_length=1)
    """Distinct values, increasing."""
    weights: list[float] = Field(min_length=1)
    """Positive weights, one per value (normalised when used)."""

    @model_validator(mode="after")
    def _pairs(self) -> Categorical:
        if len(self.values) != len(self.weights):
            raise ValueError(f"{len(self.values)} values but {len(self.weights)} weights")
        if any(b <= a for a, b in itertools.pairwise(self.values)):
            raise ValueError("values must be distinct and increasing")
        if any(w <= 0 for w in self.weights):
            raise ValueError("weights must be positive")
        return self

    def _cumulative(self) -> list[float]:
        total = sum(self.weights)
        out, running = [], 0.0
        for weight in self.weights:
            running += weight / total
            out.append(running)
        out[-1] = 1.0
        return out

    def quantile(self, q: float) -> float:
        """The smallest value whose CDF reaches q."""
        cumulative = self._cumulative()
        return self.values[min(bisect.bisect_left(cumulative, q), len(self.values) - 1)]

    def cdf(self, x: float) -> float:
        """P(X <= x)."""
        index = bisect.bisect_right(self.values, x)
        return self._cumulative()[index - 1] if index else 0.0

    def cdf_left(self, x: float) -> float:
        """P(X < x)."""
        index = bisect.bisect_left(self.values, x)
        return self._cumulative()[index - 1] if index else 0.0

    def sample(self, rng: random.Random) -> float:
        """One weighted draw."""
        return self.quantile(rng.random())

    def mean(self) -> float:
        """Expected value."""
        total = sum(self.weights)
        return sum(v * w for v, w in zip(self.values, self.weights, strict=True)) / total


Simple = Annotated[
    Fixed | Empirical | Categorical,
    Field(discriminator="kind"),
    BeforeValidator(number_is_fixed),
]
"""A distribution that is not a mixture (a mixture's components); a bare number is
`fixed`."""


class MixtureComponent(StrictModel):
    """One component of a mixture."""

    weight: float = Field(gt=0)
    """Relative weight (normalised over the components)."""
    distribution: Simple
    """The component's distribution."""


class Mixture(StrictModel):
    """A weighted mixture, e.g. a body and a heavy tail."""

    kind: Literal["mixture"] = "mixture"
    components: list[MixtureComponent] = Field(min_length=1)
    """The components."""

    def _weights(self) -> list[float]:
        total = sum(c.weight for c in self.components)
        return [c.weight / total for c in self.components]

    def cdf(self, x: float) -> float:
        """P(X <= x)."""
        return sum(
            w * c.distribution.cdf(x) for w, c in zip(self._weights(), self.components, strict=True)
        )

    def cdf_left(self, x: float) -> float:
        """P(X < x)."""
        return sum(
            w * c.distribution.cdf_left(x)
            for w, c in zip(self._weights(), self.components, strict=True)
        )

    def quantile(self, q: float) -> float:
        """The smallest x with CDF(x) >= q (bisection on the CDF)."""
        low = min(c.distribution.quantile(0.0) for c in self.components)
        high = max(c.distribution.quantile(1.0) for c in self.components)
        for _ in range(100):
            middle = (low + high) / 2
            if self.cdf(middle) >= q:
                high = middle
            else:
                low = middle
        return high

    def sample(self, rng: random.Random) -> float:
        """Pick a component by weight, then draw from it."""
        chosen = rng.choices(self.components, weights=self._weights())[0]
        return chosen.distribution.sample(rng)

    def mean(self) -> float:
        """Expected value."""
        return sum(
            w * c.distribution.mean() for w, c in zip(self._weights(), self.components, strict=True)
        )
