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

from looplab.latency.profile import RECORDED, LatencyProfile

__all__ = [
    "ProfileSpec",
    "profile_name",
    "profile_price",
    "profile_rate",
    "profile_ttft",
    "profile_vision",
    "recorded_profile",
]

ProfileSpec = LatencyProfile | Mapping[str, Any] | None
"""What the readers accept: a profile, a header's profile object (any age), or nothing."""


def profile_rate(spec: ProfileSpec) -> float | None:
    """The decode rate (visible tokens per second) of a profile or a header's profile
    object; None when absent, not a number, not finite or not positive."""
    rate = _number(spec, "decode_tps")
    return rate if rate is not None and rate > 0 else None


def profile_ttft(spec: ProfileSpec) -> float | None:
    """The profile's fixed TTFT in seconds (None when absent or not a plain number, e.g. a
    distribution)."""
    ttft = _number(spec, "ttft_s")
    return ttft if ttft is not None and ttft >= 0 else None


def _number(spec: ProfileSpec, field: str) -> float | None:
    if spec is None:
        return None
    value = getattr(spec, field, None) if isinstance(spec, LatencyProfile) else spec.get(field)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def profile_name(spec: ProfileSpec) -> str | None:
    """The profile's name (a preset's, or a custom one's), or None."""
    return _text(spec, "name")


def profile_price(spec: ProfileSpec) -> str | None:
    """The price entry the profile names (`LatencyProfile.price`), or None."""
    return _text(spec, "price")


def profile_vision(spec: ProfileSpec) -> str | None:
    """The vision token rule the profile names (`LatencyProfile.vision_tokens`), or None
    (callers fall back to `looplab.latency.vision.DEFAULT_VISION_RULE`)."""
    return _text(spec, "vision_tokens")


def _text(spec: ProfileSpec, field: str) -> str | None:
    if spec is None:
        return None
    value = getattr(spec, field, None) if isinstance(spec, LatencyProfile) else spec.get(field)
    return value if isinstance(value, str) and value else None


def recorded_profile(spec: ProfileSpec) -> LatencyProfile | None:
    """The whole profile a header recorded, validated as recorded (`RECORDED`: its price
    entry is not checked again); None when absent or empty, or when it no longer
    validates (an old trace's fields this version refuses)."""
    if isinstance(spec, LatencyProfile):
        return spec
    if not spec:
        return None
    try:
        return LatencyProfile.model_validate(dict(spec), context=RECORDED)
    except ValueError:
        return None
