"""The benches' verdict line: judged on what was measured, never more (issue 47, finding 10).

The pacing targets hold at `FIDELITY_STREAMS` (1 and 16 concurrent streams); a run at
other stream counts (256, 512: capacity, not fidelity) prints its figures unjudged.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["FIDELITY_STREAMS", "fidelity_verdict"]

FIDELITY_STREAMS = (1, 16)
"""Concurrencies at which the pacing targets must hold through every client."""


def fidelity_verdict(measured: Iterable[int], failures: list[str], targets: str) -> str:
    """The verdict line on what a bench measured, never more: FAIL naming `failures`;
    PASS naming the judged stream counts (those of `measured` in `FIDELITY_STREAMS`) and
    `targets`; NO VERDICT when it measured none of them (a run at 256 and 512 streams
    judged nothing: its figures are printed, unjudged)."""
    if failures:
        return "FAIL: " + "; ".join(failures)
    judged = sorted(set(measured) & set(FIDELITY_STREAMS))
    if not judged:
        wanted = " and ".join(str(n) for n in FIDELITY_STREAMS)
        ran = ", ".join(str(n) for n in sorted(set(measured))) or "none"
        return (
            f"NO VERDICT: the pacing targets are judged at {wanted} streams and this run "
            f"measured neither (streams: {ran}); its figures below are unjudged"
        )
    streams = " and ".join(str(n) for n in judged)
    return f"PASS: at {streams} stream{'s' if judged != [1] else ''}, {targets}"
