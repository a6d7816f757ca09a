"""The price book: what a model call costs, one YAML file per provider/model/tier.

Each file in `prices/` is one `PriceEntry` (the file name being its `name`): dollars per
million input, cached input, output and hidden reasoning tokens, the speed tier it is
sold as, where the numbers come from and when, or `assumed` where nothing is published.
A latency profile names its entry (`LatencyProfile.price`), so the cost of a run is a
function of its trace's token counts and that entry (`looplab.analysis.cost`), computed
where re-timing is and never stored in a trace.

Loaded by the same validation as every other config: a bad file is a `ConfigError`
naming the file, the line and the field. Every dollar value must be a finite number (not a
boolean: `true` is no price), at least 0 and at most `MAX_USD_PER_M`. A profile naming an
entry is checked where the profile is made (`LatencyProfile.price`, by `check_price`): an
unknown entry is an error naming it and the nearest names, and a bad file in the book is
an error naming that file, never a silently unpriced run.
"""

from __future__ import annotations

import difflib
import functools
from datetime import date as Date
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from looplab.config import StrictModel, load_yaml_mapping, validate_model
from looplab.errors import ConfigError

__all__ = [
    "MAX_USD_PER_M",
    "PRICE_DIR",
    "PriceEntry",
    "check_price",
    "load_book",
    "load_price",
    "nearest_prices",
    "price_names",
    "prices",
    "resolve_price",
]

PRICE_DIR = Path(__file__).with_name("prices")
"""Where the shipped entries live: `<name>.yaml`."""

Dollars = float

MAX_USD_PER_M = 10_000.0
"""The largest dollars per million tokens an entry may say (a chosen bound, assumed: about
65x the dearest shipped entry's $150/M): beyond it a value is a typo or junk (`1e308`
made costs `$nan`), not a price."""

_DOLLAR_FIELDS = ("input_per_m", "cached_input_per_m", "output_per_m", "reasoning_per_m")


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

    @field_validator(*_DOLLAR_FIELDS, mode="before")
    @classmethod
    def _a_number(cls, value: Any) -> Any:
        if isinstance(value, bool):  # YAML `true` would read as 1.0 $/M
            raise ValueError(f"a price is a number of dollars, not a boolean (got {value})")
        return value

    @field_validator(*_DOLLAR_FIELDS)
    @classmethod
    def _bounded(cls, value: float | None) -> float | None:
        if value is not None and value > MAX_USD_PER_M:
            raise ValueError(
                f"{value:g} dollars per million tokens is above the {MAX_USD_PER_M:,.0f} "
                "bound: not a price (a typo?)"
            )
        return value

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


def load_book(directory: Path) -> dict[str, PriceEntry]:
    """Every entry of a price book directory (`<name>.yaml` files) by name.

    Raises:
        ConfigError: the first bad file, named (never skipped: one bad file must not
            leave every profile silently unpriced).
    """
    return {entry.name: entry for entry in map(load_price, sorted(directory.glob("*.yaml")))}


@functools.cache
def prices() -> dict[str, PriceEntry]:
    """Every shipped entry by name, loaded once from `PRICE_DIR` (`load_book`).

    Raises:
        ConfigError: a bad file in the book, named.
    """
    return load_book(PRICE_DIR)


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
    if spec.endswith((".yaml", ".yml")) or Path(spec).exists():
        return load_price(Path(spec))
    raise ConfigError(
        f"unknown price entry {spec!r}; nearest: {', '.join(nearest_prices(spec))}",
        field="price",
        allowed=price_names(),
    )


def nearest_prices(spec: str, n: int = 3) -> list[str]:
    """The `n` shipped entry names closest to `spec` (at least one: the closest)."""
    names = price_names()
    close = difflib.get_close_matches(spec, names, n=n, cutoff=0.0)
    return close or names[:n]


def check_price(spec: str) -> None:
    """Check that a profile's `price` resolves: a shipped entry or a readable price file.

    Raises:
        ValueError: unknown entry (naming it and the nearest names), a bad price file, or a
            bad file in the price book (naming that file): for a pydantic validator, which
            turns it into the config's own error.
    """
    try:
        resolve_price(spec)
    except ConfigError as exc:
        unknown = exc.field == "price" and exc.source is None
        raise ValueError(exc.message if unknown else str(exc)) from None
