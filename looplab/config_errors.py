"""Pydantic validation errors as one `ConfigError` for people (`looplab.config`'s).

Each problem names where it is: the `-s key=value` override that set the value, else the
line of the YAML file; the field; what was given; the allowed values, and for an unknown
key the closest allowed one ("did you mean ...?").
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from looplab.errors import ConfigError
from looplab.urls import public_text

__all__ = ["Loc", "config_error"]

Loc = tuple[int | str, ...]
"""A key path in a config mapping."""


def _blamed(loc: Loc, overrides: Sequence[str]) -> str | None:
    """The last override whose key path is a prefix of `loc` (it set that value)."""
    found = None
    for text in overrides:
        path = tuple(p for p in text.partition("=")[0].strip().split(".") if p)
        if path and tuple(str(part) for part in loc[: len(path)]) == path:
            found = text
    return found


def config_error(
    model: type[BaseModel],
    exc: ValidationError,
    source: str | None,
    lines: Mapping[Loc, int],
    overrides: Sequence[str] = (),
) -> ConfigError:
    """The `ConfigError` of `exc` (module doc): up to 8 problems, the first one's field."""
    problems: list[str] = []
    first_field: str | None = None
    first_allowed: list[str] = []
    for error in exc.errors(include_url=False)[:8]:
        loc: Loc = tuple(error["loc"])
        field = ".".join(str(part) for part in loc) or "(top level)"
        allowed = _allowed_values(model, loc, error)
        blamed = _blamed(loc, overrides)
        line = None if blamed else _nearest_line(loc, lines)
        where = f"-s {blamed}, " if blamed else f"line {line}, " if line else ""
        text = f"{where}field '{field}': {error['msg']}"
        if "input" in error and error["type"] != "missing" and not isinstance(error["input"], dict):
            text += f" (got {public_text(repr(error['input']))})"
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1) if loc else []
        if error["type"] == "extra_forbidden" and close:
            text += f"; did you mean {close[0]!r}?"
        if allowed:
            text += f"; allowed: {', '.join(allowed)}"
        problems.append(text)
        if first_field is None:
            first_field, first_allowed = field, allowed
    count = exc.error_count()
    header = f"{count} problem{'s' if count != 1 else ''} in {model.__name__}"
    message = header + ":\n  " + "\n  ".join(problems)
    blames = {_blamed(tuple(e["loc"]), overrides) for e in exc.errors(include_url=False)[:8]}
    config_error = ConfigError(message, source=None if None not in blames else source)
    config_error.field = first_field
    config_error.allowed = first_allowed
    return config_error


def _allowed_values(model: type[BaseModel], loc: Loc, error: Any) -> list[str]:
    ctx = error.get("ctx") or {}
    if "expected" in ctx:
        return [part.strip() for part in str(ctx["expected"]).replace(" or ", ",").split(",")]
    if error["type"] == "extra_forbidden":
        parent = _model_at(model, loc[:-1])
        if parent is not None:
            return sorted(parent.model_fields)
    return []


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """Follow a location through nested models (and list/dict items) to a model class."""
    current: Any = model
    for part in loc:
        if isinstance(current, type) and issubclass(current, BaseModel):
            if isinstance(part, str) and part in current.model_fields:
                current = current.model_fields[part].annotation
                continue
            return None
        current = _unwrap_container(current)
        if current is None:
            return None
    current = _unwrap_container(current) if not isinstance(current, type) else current
    if isinstance(current, type) and issubclass(current, BaseModel):
        return current
    return None


def _unwrap_container(tp: Any) -> Any:
    """Return the model class inside Optional/list/dict annotations, if exactly one."""
    args = typing.get_args(tp)
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        return models[0] if len(models) == 1 else None
    if origin in (list, tuple, set, frozenset) and args:
        return args[0]
    if origin is dict and len(args) == 2:
        return args[1]
    return None


def _nearest_line(loc: Loc, lines: Mapping[Loc, int]) -> int | None:
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in lines:
            return lines[loc[:cut]]
    return None
