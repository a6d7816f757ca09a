"""Claim entries: the shipped ones load, a bad one is refused naming its file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from looplab.claims.evidence import METHODS
from looplab.claims.model import ENTRY_DIR, claim_entries, get_claim, load_claim
from looplab.errors import ConfigError
from looplab.report.claims.rows import band_claim, panel_claims, panel_text, speedup_band

GOOD = """\
name: good
title: A test claim
source: {title: A post, url: 'https://example.org/post', date: 2026-01-02}
quote: tasks are twice as fast
quote_kind: verbatim
claimed: {text: 2x, measure: speedup, low: 2.0, high: 2.0, point: 2.0}
conditions: {rates: 80 vs 750 tok/s}
test:
  method: workload-retime
  workload: mini-swe-agent-deepseek
  draws: 6
  slow: {decode_tps: 80}
  fast: {decode_tps: 750}
assumptions: [only the rate differs]
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_entries_load() -> None:
    """Every shipped entry validates, its method is known, and the issue's claims are there."""
    entries = claim_entries()
    assert {
        "claim-40-60",
        "claim-54",
        "claim-blink",
        "codex-spark",
        "responses-websocket",
        "paste",
        "prompt-caching",
    } <= set(entries)
    assert all(e.test.method in METHODS for e in entries.values())
    assert len(list(ENTRY_DIR.glob("*.yaml"))) == len(entries)


def test_good_entry_parses(tmp_path: Path) -> None:
    """A complete entry parses into its typed fields."""
    entry = load_claim(_write(tmp_path, "good", GOOD))
    assert entry.claimed.point == 2.0
    assert entry.source.date is not None and entry.source.date.isoformat() == "2026-01-02"
    assert entry.test.fast == {"decode_tps": 750.0}
    assert entry.conditions.model == "not stated"


def test_bad_knob_names_file_line_and_field(tmp_path: Path) -> None:
    """An unknown knob is refused with the file, the line, the field and the allowed knobs."""
    path = _write(tmp_path, "good", GOOD.replace("fast: {decode_tps", "fast: {decode_rate"))
    with pytest.raises(ConfigError) as caught:
        load_claim(path)
    text = str(caught.value)
    assert str(path) in text and "test.fast" in text and "decode_rate" in text
    assert "decode_tps" in text and "line 13" in text


def test_bad_band_and_name(tmp_path: Path) -> None:
    """A band upside down, and a name other than the file's, each name the field."""
    upside = GOOD.replace("low: 2.0, high: 2.0", "low: 3.0, high: 2.0")
    with pytest.raises(ConfigError, match=r"field 'claimed'.*low \(3.0\) is above high"):
        load_claim(_write(tmp_path, "good", upside))
    with pytest.raises(ConfigError, match=r"field 'name'"):
        load_claim(_write(tmp_path, "other", GOOD))


def test_a_panel_wording_needs_a_shorter_claim(tmp_path: Path) -> None:
    """The panel reads its rows as percent shorter: a panel wording on a speedup claim is
    refused, naming the measure and what it needs."""
    panel = GOOD + "panel: {label: twice as fast, source: a post}\n"
    with pytest.raises(ConfigError, match=r"needs a 'shorter' claim.*'speedup'"):
        load_claim(_write(tmp_path, "good", panel))
    shorter = panel.replace(
        "measure: speedup, low: 2.0, high: 2.0, point: 2.0", "measure: shorter, low: 0.5, high: 0.5"
    )
    assert load_claim(_write(tmp_path, "good", shorter)).panel is not None


def test_unknown_claim_lists_names() -> None:
    """Asking for a claim that is not shipped lists the shipped names."""
    with pytest.raises(ConfigError, match="codex-spark"):
        get_claim("codex-sparks")


def test_panel_claims_come_from_entries() -> None:
    """The report's claim rows are the entries with a panel wording, their bands unchanged."""
    panel = {c.name: c for c in panel_claims()}
    assert set(panel) == {"claim-40-60", "claim-54"}
    assert speedup_band(band_claim()) == pytest.approx((1 / 0.6, 1 / 0.4))
    assert panel["claim-54"].claimed.low == panel["claim-54"].claimed.high == 0.54
    assert "54% efficiency improvement" in panel_text(panel["claim-54"]).label
