"""The price book: what a model call costs, one YAML file per provider/model/tier.

Each file in `prices/` is one `PriceEntry` (the file name being its `name`): dollars per
million input, cached input, output and hidden reasoning tokens, the speed tier it is
sold as, where the numbers come from and when, or `assumed` where nothing is published.
A latency profile names its entry (`LatencyProfile.price`), so the cost of a run is a
function of its trace's token counts and that entry (`looplab.analysis.cost`), computed
where re-timing is and never stored in a trace.

Loaded by the same validation as every other config: a bad file is a `ConfigError`
naming the file, the line and the field.
"""

from __future__ import annotations

import functools
from datetime import date as Date
from pathlib import Path

from pydantic import Field, model_validator

from looplab.config import StrictModel, load_yaml_mapping, validate_model
from looplab.errors import ConfigError

__all__ = ["PRICE_DIR", "PriceEntry", "load_price", "price_names", "prices", "resolve_price"]

PRICE_DIR = Path(__file__).with_name("prices")
"""Where the shipped entries live: `<name>.yaml`."""

Dollars = float


class PriceEntry(StrictModel):
    """One provider/model/tier's token prices (US dollars per million tokens)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.+-]{0,80}$")
    """Registry name, the file's stem (`anthropic-claude-opus-4.6-fast`)."""
    provider: str
    """Who sells it (`anthropic`, `openai`, `cerebras`, ...)."""
    model: str
    """Model id as the provider names it."""
    tier: str
    """The provider's name for the tier (`standard`, `fast`, `priority`, `/fast`)."""
    speed_tier: str
    """Which speed it buys, in the lab's words: `standard` or `fast`; entries of one
    model with different speed tiers are the pair a fast-inference decision weighs."""
    profiles: list[str] = Field(default_factory=list)
    """Latency presets this entry belongs to (documentation; the profile names its
    price, `LatencyProfile.price`)."""
    input_per_m: Dollars = Field(ge=0)
    """Uncached prompt tokens."""
    cached_input_per_m: Dollars = Field(ge=0)
    """Prompt tokens read from the provider's prompt cache."""
    output_per_m: Dollars = Field(ge=0)
    """Visible completion tokens."""
    reasoning_per_m: Dollars | None = Field(default=None, ge=0)
    """Hidden reasoning tokens; None: billed as output (what OpenAI and Anthropic do)."""
    cache_lost_on_tier_switch: bool = False
    """Whether switching to or from this tier within a run invalidates the prompt cache
    (Anthropic's fast mode: the next call's cached tokens are billed as input)."""
    source: str
    """Where the numbers come from: URL or name, or `assumed`."""
    date: Date
    """When the source said so, or when it was read (`YYYY-MM-DD`)."""
    assumptions: list[str] = Field(default_factory=list)
    """Which values are derived or guessed rather than published."""

    @model_validator(mode="after")
    def _not_cheaper_cached(self) -> PriceEntry:
        if self.cached_input_per_m > self.input_per_m:
            raise ValueError(
                f"cached_input_per_m ({self.cached_input_per_m}) exceeds input_per_m "
                f"({self.input_per_m}): a cache read never costs more than a fresh token"
            )
        return self

    @property
    def reasoning_rate(self) -> Dollars:
        """Dollars per million reasoning tokens (the output rate unless set)."""
        return self.output_per_m if self.reasoning_per_m is None else self.reasoning_per_m


def load_price(path: Path) -> PriceEntry:
    """One price file, validated; its `name` must be its file name.

    Raises:
        ConfigError: unreadable file, a field that fails validation (file, line, field),
            or a name that is not the file's stem.
    """
    data, lines = load_yaml_mapping(path)
    entry = validate_model(PriceEntry, data, source=str(path), lines=lines)
    if entry.name != path.stem:
        raise ConfigError(
            f"price entry is named {entry.name!r} but its file is {path.name}",
            source=str(path),
            field="name",
        )
    return entry


@functools.cache
def prices() -> dict[str, PriceEntry]:
    """Every shipped entry by name, loaded once from `PRICE_DIR`."""
    return {entry.name: entry for entry in map(load_price, sorted(PRICE_DIR.glob("*.yaml")))}


def price_names() -> list[str]:
    """The shipped entry names, sorted."""
    return sorted(prices())


def resolve_price(spec: str) -> PriceEntry:
    """A shipped entry by name, or a price YAML file by path.

    Raises:
        ConfigError: unknown name (listing the allowed ones) or a bad file.
    """
    known = prices()
    if spec in known:
        return known[spec]
    if spec.endswith((".yaml", ".yml")) or Path(spec).is_file():
        return load_price(Path(spec))
    raise ConfigError(
        f"unknown price entry {spec!r}", field="price", allowed=price_names(), given=spec
    )
