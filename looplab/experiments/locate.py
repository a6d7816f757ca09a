"""Where a `looplab run` input comes from: a config argument that names a bundled config
(`resolve_config`), and the `file:line` of an unknown task or profile found only after the
file was loaded (`located`)."""

from __future__ import annotations

from pathlib import Path

from looplab.errors import ConfigError

__all__ = ["located", "resolve_config"]

_WHERE = {"task": ("tasks", None), "profile": ("backends", "profile")}
"""A validation error's field -> the config list it came from (and the key in its items)."""


def located(exc: ConfigError, config: Path) -> ConfigError:
    """`exc` (an unknown task or profile found after loading) with `config:line` of the
    list item that named it, when the file has it."""
    from looplab.config import load_yaml_mapping

    where = _WHERE.get(exc.field or "")
    if exc.source is not None or where is None or exc.given is None:
        return exc
    data, lines = load_yaml_mapping(config)
    key, inner = where
    for index, item in enumerate(data.get(key) or []):
        value = item.get(inner) if inner and isinstance(item, dict) else item
        if value == exc.given:
            line = lines.get((key, index, inner) if inner else (key, index))
            source = f"{config}:{line}" if line else str(config)
            return ConfigError(
                exc.message, source=source, field=exc.field, allowed=exc.allowed, given=exc.given
            )
    return exc


def resolve_config(config: Path) -> Path:
    """`config` when it is a file; else the bundled config of that name (`quickstart`,
    `claim.yaml`), so a wheel install runs them without a checkout.

    Raises:
        ConfigError: neither, naming the bundled configs (and the closest one).
    """
    import difflib

    from looplab.bundled import bundled_configs_dir

    if config.exists() or config.parent != Path("."):
        return config
    bundled = bundled_configs_dir()
    names = sorted(p.stem for p in bundled.glob("*.yaml"))
    stem = config.name.removesuffix(".yaml").removesuffix(".yml")
    if stem in names:
        return bundled / f"{stem}.yaml"
    close = difflib.get_close_matches(stem, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(
        f"no such file {str(config)!r}, and no bundled config of that name{hint}",
        field="CONFIG",
        allowed=names,
    )
