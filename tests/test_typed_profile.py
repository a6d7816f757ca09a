"""The decode rate reaches every reader through typed values (issue 35): outside the latency
package no module picks a profile's `decode_tps` out of a mapping by its string name."""

from __future__ import annotations

import re
from pathlib import Path

from looplab.latency.profile import LatencyProfile
from looplab.latency.spec import (
    profile_name,
    profile_price,
    profile_rate,
    profile_ttft,
    profile_vision,
    recorded_profile,
)

PACKAGE = Path(__file__).resolve().parents[1] / "looplab"
_STRING_READ = re.compile(r"""(\.get\(\s*|\[\s*)["'](decode_tps|ttft_s)["']""")


def test_no_string_reads_of_the_decode_rate_outside_latency() -> None:
    """`.get("decode_tps")` / `["decode_tps"]` (and `ttft_s`) appear only in looplab/latency."""
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "latency"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _STRING_READ.search(line)
    ]
    assert offenders == []


def test_header_profiles_read_tolerantly() -> None:
    """A dumped profile, an importer's partial dict, a damaged or absent one all give typed
    values or None, never an exception."""
    dumped = LatencyProfile(name="fast-750", decode_tps=750.0).model_dump()
    assert profile_rate(dumped) == 750.0 and profile_name(dumped) == "fast-750"
    assert profile_rate({"decode_tps": 40.7}) == 40.7 and profile_name({}) is None
    assert profile_rate({"decode_tps": "fast"}) is None
    assert profile_rate({"decode_tps": True}) is None
    assert profile_rate({"decode_tps": float("inf")}) is None
    assert profile_rate({"decode_tps": -3}) is None
    assert profile_rate(None) is None and profile_ttft(None) is None
    assert profile_ttft({"ttft_s": 0.3}) == 0.3
    assert profile_ttft({"ttft_s": {"kind": "lognormal"}}) is None
    assert profile_rate(LatencyProfile(name="x", decode_tps=80.0)) == 80.0


def test_the_other_fields_read_tolerantly() -> None:
    """Price entry, vision rule and the whole recorded profile: typed or None, never raised."""
    dumped = LatencyProfile(name="x", decode_tps=80.0, vision_tokens="claude").model_dump()
    assert profile_vision(dumped) == "claude" and profile_vision({}) is None
    assert profile_price({"price": "openai/gpt-4o"}) == "openai/gpt-4o"
    assert profile_price({"price": 3}) is None and profile_price(None) is None
    recorded = recorded_profile(dumped)
    assert recorded is not None and recorded.decode_tps == 80.0
    assert recorded_profile({"decode_tps": "fast"}) is None
    assert recorded_profile({}) is None and recorded_profile(None) is None


_HEADER_PROFILE = re.compile(r"(profile_spec|header\.profile)\b.*(\.get\(|\[\s*['\"])")


def test_header_profiles_are_read_only_through_the_spec_readers() -> None:
    """Outside looplab/latency no line picks a field out of a header's profile
    (`header.profile`, `RunRecord.profile_spec`) by key, and nothing but `latency/` validates
    one (`RECORDED` is imported only there: `recorded_profile` is the reader)."""
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "latency"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _HEADER_PROFILE.search(line) or re.search(r"\bRECORDED\b", line)
    ]
    assert offenders == []
