"""Named latency presets, each with its source and the values that are assumptions.

Each preset is one YAML file in `preset_profiles/` (shipped in the wheel), a serialized
`LatencyProfile` with its `source` and `assumptions`, loaded by the same validation as a
user's `--profile my.yaml`. `fast-750` and `slow-80` are the pair the lab exists to
compare: identical in everything but the decode rate, so a difference between them is
the decode rate's doing. The other presets model published systems (background.md);
where a publication gives only the decode rate, the rest are labelled assumptions.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from looplab.config import apply_overrides, apply_values, load_yaml_mapping, validate_model
from looplab.errors import ConfigError
from looplab.latency.profile import LatencyProfile

__all__ = ["PRESET_DIR", "preset_names", "presets", "resolve_profile", "served_profile"]

PRESET_DIR = Path(__file__).with_name("preset_profiles")
"""Where the preset files live: `<name>.yaml`, the file name being the preset's name."""


@functools.cache
def presets() -> dict[str, LatencyProfile]:
    """Every preset by name, loaded once from `PRESET_DIR`.

    Raises:
        ConfigError: a preset file is invalid, or its `name` is not its file name.
    """
    loaded: dict[str, LatencyProfile] = {}
    for path in sorted(PRESET_DIR.glob("*.yaml")):
        data, lines = load_yaml_mapping(path)
        profile = validate_model(LatencyProfile, data, source=str(path), lines=lines)
        if profile.name != path.stem:
            raise ConfigError(f"preset {path} is named {profile.name!r}", field="name")
        loaded[profile.name] = profile
    return loaded


def preset_names() -> list[str]:
    """The preset names, sorted."""
    return sorted(presets())


def resolve_profile(
    spec: str, overrides: Sequence[str] = (), *, values: Mapping[str, Any] | None = None
) -> LatencyProfile:
    """Turn a preset name or a YAML file path, plus overrides, into a profile.

    Args:
        spec: a preset name (`fast-750`) or a path to a YAML file holding a profile.
        overrides: `field=value` strings from a command line (e.g. `decode_tps=500`),
            parsed as YAML, applied first.
        values: typed values by (dotted) field path, applied as they are (an experiment
            config's `overrides:` and a cell's seed: no string round trip).

    Raises:
        ConfigError: unknown preset (listing the allowed names), unreadable file, or a
            field that fails validation (naming it).
    """
    base: dict[str, Any]
    source: str
    known = presets()
    if spec in known and not overrides and not values:
        return known[spec].model_copy(deep=True)  # validated when loaded: no round trip
    if spec in known:
        base = known[spec].model_dump(by_alias=True)
        source = f"profile preset '{spec}'"
        lines: dict[tuple[int | str, ...], int] = {}
    elif spec.endswith((".yaml", ".yml")) or Path(spec).is_file():
        base, lines = load_yaml_mapping(Path(spec))
        source = spec
    else:
        raise ConfigError(
            f"unknown latency profile {spec!r}",
            field="profile",
            allowed=preset_names(),
            given=str(spec),
        )
    data = apply_overrides(base, overrides)
    data = apply_values(data, ((k.split("."), v) for k, v in (values or {}).items()))
    profile = validate_model(LatencyProfile, data, source=source, lines=lines)
    preset = known.get(spec)
    if preset is not None and profile.name == preset.name and _changed(profile, preset):
        # only a profile whose timing differs from its preset is renamed (`_changed`)
        profile = profile.model_copy(update={"name": f"{spec}+custom"})
    return profile


def served_profile(spec: str, flag: str) -> LatencyProfile:
    """The profile recorded runs were served at, given with `flag` (`import -p`, `collect
    -p`): a known preset or a profile YAML file, never a free name (a typo would make a
    group that pairs with nothing, and leave the runs unpriced).

    Raises:
        ConfigError: naming `flag`, what was given and the nearest presets.
    """
    known = presets()
    if spec in known or spec.endswith((".yaml", ".yml")) or Path(spec).is_file():
        return resolve_profile(spec)
    close = difflib.get_close_matches(spec, list(known), n=3, cutoff=0.0)
    raise ConfigError(
        f"{spec!r} is neither a latency preset nor a profile file; nearest presets: "
        f"{', '.join(close)} (a file: a path ending in .yaml)",
        field=flag,
        allowed=preset_names(),
    )


def _changed(profile: LatencyProfile, preset: LatencyProfile) -> bool:
    """Whether `profile` differs from `preset` in its timing: anything but its name, seed
    and price entry. A price alone keeps the preset's name, so runs priced otherwise still
    pair with the preset's other runs (the price is how a run is billed, not how fast it
    is; the trace's profile keeps the entry it was priced at)."""
    ignore = {"name", "seed", "price"}
    return profile.model_dump(exclude=ignore) != preset.model_dump(exclude=ignore)
