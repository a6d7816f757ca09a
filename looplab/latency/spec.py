"""A trace header's profile, read into typed values.

A trace header keeps the profile it ran at as a JSON object (`TraceHeader.profile`): what
`LatencyProfile.model_dump()` wrote, or the few fields an importer knew, or (old traces)
fields this version no longer has. Readers never pick its fields by string themselves:
they call these, which accept any of those shapes and return typed values or None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from looplab.latency.profile import LatencyProfile

__all__ = ["profile_name", "profile_rate", "profile_ttft"]


def profile_rate(spec: LatencyProfile | Mapping[str, Any] | None) -> float | None:
    """The decode rate (visible tokens per second) of a profile or a header's profile
    object; None when absent, not a number, not finite or not positive."""
    rate = _number(spec, "decode_tps")
    return rate if rate is not None and rate > 0 else None


def profile_ttft(spec: LatencyProfile | Mapping[str, Any] | None) -> float | None:
    """The profile's fixed TTFT in seconds (None when absent or not a plain number, e.g. a
    distribution)."""
    ttft = _number(spec, "ttft_s")
    return ttft if ttft is not None and ttft >= 0 else None


def _number(spec: LatencyProfile | Mapping[str, Any] | None, field: str) -> float | None:
    if spec is None:
        return None
    value = getattr(spec, field, None) if isinstance(spec, LatencyProfile) else spec.get(field)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def profile_name(spec: LatencyProfile | Mapping[str, Any] | None) -> str | None:
    """The profile's name (a preset's, or a custom one's), or None."""
    if spec is None:
        return None
    value = spec.name if isinstance(spec, LatencyProfile) else spec.get("name")
    return value if isinstance(value, str) and value else None
