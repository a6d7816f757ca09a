"""The price book: shipped entries, the profiles that name them, loader errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from looplab.errors import ConfigError
from looplab.latency.presets import presets
from looplab.latency.prices import load_price, price_names, prices, resolve_price


def test_shipped_entries_pair_fast_and_standard_tiers_of_one_model() -> None:
    """At least 8 entries; each model with a fast entry also has a standard one."""
    book = prices()
    assert len(book) >= 8
    tiers: dict[str, set[str]] = {}
    for entry in book.values():
        tiers.setdefault(entry.model, set()).add(entry.speed_tier)
        assert entry.source and entry.date
    assert tiers["claude-opus-4-6"] == {"fast", "standard"}
    assert tiers["gpt-5.4"] == {"fast", "standard"}
    assert tiers["gpt-oss-120b"] | tiers["openai/gpt-oss-120b"] == {"fast", "standard"}


def test_anthropic_fast_mode_is_six_times_standard_and_loses_the_cache() -> None:
    """The published multiplier holds between the two Opus 4.6 entries."""
    fast = resolve_price("anthropic-claude-opus-4.6-fast")
    standard = resolve_price("anthropic-claude-opus-4.6-standard")
    assert fast.output_per_m == 6 * standard.output_per_m == 150.0
    assert fast.cache_lost_on_tier_switch and standard.cache_lost_on_tier_switch


def test_every_profile_price_names_an_entry() -> None:
    """A preset's `price` resolves, and the mission pair is priced."""
    named = {name: p.price for name, p in presets().items() if p.price}
    assert set(named.values()) <= set(price_names())
    assert named["slow-80"] == "openai-gpt-5.4-standard"
    assert named["fast-750"] == "openai-gpt-5.4-codex-fast"


def test_unknown_name_lists_the_allowed_ones() -> None:
    """A misspelt entry name is an error naming the field and the choices."""
    with pytest.raises(ConfigError) as info:
        resolve_price("openai-gpt-5.4-standrd")
    assert "price" in str(info.value) and "openai-gpt-5.4-standard" in str(info.value)


def test_bad_field_names_file_line_and_field(tmp_path: Path) -> None:
    """A negative price is refused with the file, its line and the field."""
    path = tmp_path / "mine.yaml"
    path.write_text(
        "name: mine\nprovider: p\nmodel: m\ntier: t\nspeed_tier: fast\n"
        "input_per_m: -1\ncached_input_per_m: 0\noutput_per_m: 1\n"
        "source: assumed\ndate: 2026-12-04\n"
    )
    with pytest.raises(ConfigError) as info:
        load_price(path)
    text = str(info.value)
    assert str(path) in text and "line 6" in text and "input_per_m" in text


def test_name_must_be_the_file_stem(tmp_path: Path) -> None:
    """An entry whose name is not its file's stem is refused, naming `name`."""
    path = tmp_path / "other.yaml"
    path.write_text(
        "name: mine\nprovider: p\nmodel: m\ntier: t\nspeed_tier: fast\n"
        "input_per_m: 1\ncached_input_per_m: 2\noutput_per_m: 1\n"
        "source: assumed\ndate: 2026-12-04\n"
    )
    with pytest.raises(ConfigError) as info:
        load_price(path)
    assert "cached_input_per_m" in str(info.value)  # cache dearer than input: refused first
    path.write_text(path.read_text().replace("cached_input_per_m: 2", "cached_input_per_m: 1"))
    with pytest.raises(ConfigError, match="name"):
        load_price(path)
