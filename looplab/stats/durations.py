"""Durations people type: `90`, `90s`, `2m`, `1.5h` -> seconds (the one parser)."""

from __future__ import annotations

import math
import re

__all__ = ["UNITS", "parse_duration"]

UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
"""Suffix -> seconds per unit (no suffix: seconds)."""
_DURATION = re.compile(r"^\s*(?P<n>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>s|min|m|h)?\s*$")


def parse_duration(text: str) -> float:
    """Seconds in `text` (`90`, `90s`, `2m`, `2min`, `1.5h`).

    Raises:
        ValueError: not a positive duration in those forms (the message lists them).
    """
    match = _DURATION.match(text.lower())
    seconds = float(match["n"]) * UNITS[match["unit"] or ""] if match else math.nan
    if not match or not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(
            f"{text!r} is not a positive duration: give seconds (90, 90s), minutes (2m) or "
            "hours (1.5h)"
        )
    return seconds
