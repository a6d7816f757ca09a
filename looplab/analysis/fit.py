"""Fitting the serving model's curves to recorded calls (for `looplab calibrate`).

Two fits, each in the functional form of `looplab.latency.timing` so its result drops
into a latency profile (`as_overrides`):

- **decode rate vs context length**: a call's visible decode covers tokens reading the
  contexts `P + R + 1 .. P + N - 1` (prompt P, reasoning R, completion N), so its time per
  token, `decode_s / (visible - 1)`, is the line `a + b x context` at the mean context
  `P + R + visible / 2` (exact for a line). Least squares gives `a` and `b`:
  `decode_tps = 1 / a`, `decode_context_slowdown = b / a x 100,000`.
- **TTFT vs prompt length**: `ttft = c + u / r + k x u (P + C - 1) / 2 / (r x 100,000)`
  with `u = P - C` uncached tokens: linear in the features `u` and `u (P + C - 1) / 2`.
  The intercept `c` lumps the TTFT base, network, pipeline and mean jitter (`ttft_s`);
  `prefill_tps = 1 / (u's coefficient)`, `prefill_context_slowdown` from the other.

Coefficients that come out negative are physically meaningless (decode getting faster
with context, prefill taking negative time): the term is dropped and the rest refitted,
and the fit says so in `notes`. Calls whose times an importer estimated are left out
(fitting an estimate recovers the estimator, not the server).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from looplab.latency.timing import PER_CONTEXT
from looplab.traces.schema import ModelCallEvent

__all__ = [
    "DecodeContextFit",
    "TtftPromptFit",
    "decode_points",
    "fit_decode_vs_context",
    "fit_ttft_vs_prompt",
    "ttft_points",
]


@dataclass(frozen=True)
class DecodeContextFit:
    """`token time = a + b x context`, as profile fields."""

    decode_tps: float
    """1 / a: the rate at zero context."""
    decode_context_slowdown: float
    """b / a x 100,000: relative growth of the token time per 100K context tokens."""
    points: int
    r2: float
    """Share of the variance of the per-token time the line explains."""
    rmse_s: float
    """Root-mean-square residual of the per-token time (seconds)."""
    notes: list[str] = field(default_factory=list)

    def as_overrides(self) -> list[str]:
        """`field=value` strings for `resolve_profile` / `--profile-set`."""
        return [
            f"decode_tps={self.decode_tps:.6g}",
            f"decode_context_slowdown={self.decode_context_slowdown:.6g}",
        ]


@dataclass(frozen=True)
class TtftPromptFit:
    """`ttft = c + prefill(P, C)`, as profile fields."""

    ttft_s: float
    """The intercept: TTFT base + network + pipeline + mean jitter."""
    prefill_tps: float | None
    """None: prefill time not measurable in these calls (free)."""
    prefill_context_slowdown: float
    points: int
    r2: float
    rmse_s: float
    notes: list[str] = field(default_factory=list)

    def as_overrides(self) -> list[str]:
        """`field=value` strings for `resolve_profile` / `--profile-set`."""
        prefill = "null" if self.prefill_tps is None else f"{self.prefill_tps:.6g}"
        return [
            f"ttft_s={self.ttft_s:.6g}",
            f"prefill_tps={prefill}",
            f"prefill_context_slowdown={self.prefill_context_slowdown:.6g}",
        ]


def decode_points(calls: Iterable[ModelCallEvent]) -> list[tuple[float, float]]:
    """(mean context, seconds per visible token) of every call with a measured decode of
    at least two visible tokens and known prompt tokens."""
    points = []
    for call in calls:
        visible = call.output_tokens
        if (
            visible is None
            or visible < 2
            or call.decode_s is None
            or call.prompt_tokens is None
            or "decode_s" in call.estimated
        ):
            continue
        context = call.prompt_tokens + (call.reasoning_tokens or 0) + visible / 2
        points.append((context, call.decode_s / (visible - 1)))
    return points


def ttft_points(calls: Iterable[ModelCallEvent]) -> list[tuple[int, int, float]]:
    """(prompt, cached, TTFT seconds) of every call with a measured TTFT and known prompt
    tokens, whose TTFT holds no hidden reasoning (none, or its time known and removed)."""
    points = []
    for call in calls:
        ttft = call.ttft_s
        if ttft is None or call.prompt_tokens is None or "ttft_s" in call.estimated:
            continue
        if call.reasoning_tokens and call.reasoning_s is None:
            continue  # hidden reasoning of unknown duration inside the TTFT
        points.append((call.prompt_tokens, call.cached_tokens or 0, ttft))
    return points


def fit_decode_vs_context(points: Sequence[tuple[float, float]]) -> DecodeContextFit:
    """Least-squares line through (context, seconds per token) points (module docstring).

    Raises:
        ValueError: no points.
    """
    if not points:
        raise ValueError("no calls with a measured decode of two or more visible tokens")
    xs = [[1.0, c] for c, _ in points]
    ys = [t for _, t in points]
    notes: list[str] = []
    a, b = _solve(xs, ys)
    if b < 0 or len({c for c, _ in points}) < 2:
        if b < 0:
            notes.append("decode got faster with context in these calls: slope set to 0")
        (a,) = _solve([[1.0]] * len(ys), ys)
        b = 0.0
    r2, rmse = _quality([a + b * c for c, _ in points], ys)
    slowdown = b / a * PER_CONTEXT if a > 0 else 0.0
    return DecodeContextFit(1 / a if a > 0 else math.inf, slowdown, len(points), r2, rmse, notes)


def fit_ttft_vs_prompt(points: Sequence[tuple[int, int, float]]) -> TtftPromptFit:
    """Least-squares fit of TTFT against the uncached prompt (module docstring).

    Raises:
        ValueError: no points.
    """
    if not points:
        raise ValueError("no calls with a measured TTFT and known prompt tokens")
    ys = [t for _, _, t in points]
    features = [(float(p - c), (p - c) * (p + c - 1) / 2) for p, c, _ in points]
    notes: list[str] = []
    terms = 3
    while True:
        xs = [[1.0, u, q][:terms] for u, q in features]
        coefficients = _solve(xs, ys) + [0.0] * (3 - terms)
        intercept, linear, quadratic = coefficients
        if terms == 3 and quadratic < 0:
            notes.append("prefill grew less than linearly: quadratic term set to 0")
            terms = 2
        elif terms >= 2 and linear <= 0:
            notes.append("no prefill time measurable: prefill set to free")
            terms = 1
        else:
            break
    predicted = [intercept + linear * u + quadratic * q for u, q in features]
    r2, rmse = _quality(predicted, ys)
    prefill_tps = 1 / linear if linear > 0 else None
    slowdown = quadratic / linear * PER_CONTEXT if linear > 0 else 0.0
    return TtftPromptFit(intercept, prefill_tps, slowdown, len(points), r2, rmse, notes)


def _solve(xs: Sequence[Sequence[float]], ys: Sequence[float]) -> list[float]:
    """Least squares via the normal equations (a few columns: Gaussian elimination with
    partial pivoting); columns that carry no information get 0."""
    k = len(xs[0])
    # scale columns so that features of very different magnitude stay well conditioned
    scales = [max((abs(row[j]) for row in xs), default=1.0) or 1.0 for j in range(k)]
    rows = [[row[j] / scales[j] for j in range(k)] for row in xs]
    matrix = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    vector = [sum(r[i] * y for r, y in zip(rows, ys, strict=True)) for i in range(k)]
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(matrix[r][col]))
        matrix[col], matrix[pivot] = matrix[pivot], matrix[col]
        vector[col], vector[pivot] = vector[pivot], vector[col]
        if abs(matrix[col][col]) < 1e-12:
            continue
        for row in range(k):
            if row != col:
                factor = matrix[row][col] / matrix[col][col]
                matrix[row] = [
                    m - factor * p for m, p in zip(matrix[row], matrix[col], strict=True)
                ]
                vector[row] -= factor * vector[col]
    return [
        (vector[i] / matrix[i][i] / scales[i]) if abs(matrix[i][i]) >= 1e-12 else 0.0
        for i in range(k)
    ]


def _quality(predicted: Sequence[float], observed: Sequence[float]) -> tuple[float, float]:
    """(R^2, RMSE) of predictions against observations."""
    mean = sum(observed) / len(observed)
    residual = sum((p - o) ** 2 for p, o in zip(predicted, observed, strict=True))
    total = sum((o - mean) ** 2 for o in observed)
    r2 = 1 - residual / total if total > 0 else (1.0 if residual < 1e-18 else 0.0)
    return r2, math.sqrt(residual / len(observed))
