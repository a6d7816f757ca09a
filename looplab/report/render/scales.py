"""Scales and number formats for the hand-written SVG charts (`svg.py`).

NaN and infinite values are gaps: a scale whose domain is not finite falls back to
[0, 1]; a log scale maps a non-finite value to NaN (the chart skips it).
"""

from __future__ import annotations

import math

__all__ = ["LinearScale", "LogScale", "Scale", "all_finite", "fmt_num", "fmt_s"]


def fmt_num(value: float) -> str:
    """Compact number for ticks: 0.25, 1.5, 12, 1,200."""
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.0f}"
    if magnitude >= 1:
        return f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{value:.3g}"


def fmt_s(value: float) -> str:
    """Seconds for humans: 12.3 s, 450 ms."""
    if math.isnan(value):
        return "-"
    if abs(value) < 1:
        return f"{value * 1000:.0f} ms"
    if abs(value) < 100:
        return f"{value:.2f} s"
    return f"{value:.0f} s"


def all_finite(*values: float) -> bool:
    """True when every value is a finite number (NaN and infinities are gaps)."""
    return all(math.isfinite(v) for v in values)


class Scale:
    """Maps a data interval onto a pixel interval."""

    def __init__(self, d0: float, d1: float, r0: float, r1: float) -> None:
        if not all_finite(d0, d1):
            d0, d1 = (d0, d0 + 1.0) if all_finite(d0) else (0.0, 1.0)
        self.d0, self.d1, self.r0, self.r1 = d0, d1, r0, r1

    def __call__(self, value: float) -> float:
        raise NotImplementedError

    def ticks(self, count: int = 5) -> list[float]:
        """Round tick values inside the domain."""
        raise NotImplementedError


class LinearScale(Scale):
    """Linear scale; the domain is widened to be non-empty."""

    def __init__(self, d0: float, d1: float, r0: float, r1: float) -> None:
        if all_finite(d0, d1) and abs(d1 - d0) < 1e-12:
            d1 = d0 + (abs(d0) if abs(d0) >= 1e-12 else 1.0)
        super().__init__(d0, d1, r0, r1)

    def __call__(self, value: float) -> float:
        return self.r0 + (value - self.d0) / (self.d1 - self.d0) * (self.r1 - self.r0)

    def ticks(self, count: int = 5) -> list[float]:
        low, high = min(self.d0, self.d1), max(self.d0, self.d1)
        span = high - low
        raw = span / max(1, count)
        if not (all_finite(raw) and raw > 0):
            return [low]
        power = 10.0 ** math.floor(math.log10(raw))
        step = next((m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw), raw)
        first = math.ceil(low / step - 1e-9) * step
        values = []
        value = first
        while value <= high + 1e-9 * span:
            values.append(round(value, 10))
            value += step
        return values


class LogScale(Scale):
    """Base-10 log scale (domain must be positive)."""

    def __init__(self, d0: float, d1: float, r0: float, r1: float) -> None:
        d0 = max(d0, 1e-9) if all_finite(d0) else 1.0
        d1 = max(d1, d0 * 10) if all_finite(d1) and d0 * 10 < math.inf else d0 * 10
        super().__init__(d0, d1, r0, r1)
        self._l0, self._l1 = math.log10(self.d0), math.log10(self.d1)

    def __call__(self, value: float) -> float:
        if not all_finite(value):
            return math.nan
        position = (math.log10(max(value, 1e-12)) - self._l0) / (self._l1 - self._l0)
        return self.r0 + position * (self.r1 - self.r0)

    def ticks(self, count: int = 5) -> list[float]:
        low, high = math.floor(self._l0), math.ceil(self._l1)
        multipliers = (1, 2, 5) if high - low <= 3 else (1,)
        return [
            m * 10**p
            for p in range(low, high + 1)
            for m in multipliers
            if self.d0 * 0.999 <= m * 10**p <= self.d1 * 1.001
        ]
