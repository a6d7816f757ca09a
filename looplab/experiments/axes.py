"""Experiment axes: any config field as a dimension of the matrix.

```yaml
axes:                                   # cartesian product of the listed values
  agent.streaming_dispatch: [false, true]
  backend.profile.prefix_cache: [true, false]
variants:                               # or: explicit combinations (each x the axes)
  - {}                                  # all defaults
  - {agent.speculation: true}
```

A path is dotted: `agent.*`, `sandbox.*`, `budgets.*`, `workload.*` name fields of the
experiment's sections, `backend.profile.*` a latency-profile field (applied as one more
profile override of every backend), `backend.policy` the simulated policy,
`backend.transport` how the agents call the backend (`http`, `websocket`). Paths and
values are checked against the pydantic models before anything runs; a bad one is an
error naming the path and what is allowed.

Every cell carries its `variant`: each path of the experiment's axes and variants with
its value in that cell (the default where a variant leaves it out), so the report can
group by any of them. Cell ids name the variant (`streaming_dispatch-true+...`, short
names, sorted) only when the experiment has axes, so other ids are unchanged.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any, cast, get_args

from pydantic import BaseModel, ValidationError, create_model

from looplab.latency.profile import LatencyProfile

__all__ = [
    "EXPERIMENT_SECTIONS",
    "Variant",
    "apply_to_backend",
    "apply_to_config",
    "axis_label",
    "check_axes",
    "expand_variants",
]

Variant = tuple[tuple[str, Any], ...]
"""Sorted (path, value) pairs: hashable, and the order the cell id names them in."""

EXPERIMENT_SECTIONS = ("agent", "sandbox", "budgets", "workload")
"""Top-level sections of `ExperimentConfig` whose fields can be axes."""
BACKEND_FIELDS = ("policy", "transport")
"""`BackendSpec` fields that can be axes (`backend.<field>`)."""


def _field_model(root: BaseModel, path: str) -> tuple[type[BaseModel], str]:
    """The model class that owns the path's last field, and that field's name.

    Raises:
        ValueError: an unknown section or field, naming what is allowed.
    """
    parts = path.split(".")
    head = parts[0]
    if head == "backend":
        if len(parts) == 3 and parts[1] == "profile":
            return _known(LatencyProfile, parts[2], path), parts[2]
        if len(parts) == 2 and parts[1] in BACKEND_FIELDS:
            return _backend_model(root), parts[1]
        raise ValueError(
            f"axes: {path!r}: a backend axis is backend.profile.<field> or "
            f"backend.{'|'.join(BACKEND_FIELDS)}"
        )
    if head not in EXPERIMENT_SECTIONS or len(parts) < 2:
        allowed = [f"{s}.<field>" for s in EXPERIMENT_SECTIONS] + ["backend.profile.<field>"]
        raise ValueError(f"axes: {path!r} is not an axis path; allowed: {', '.join(allowed)}")
    node: BaseModel = getattr(root, head)
    for part in parts[1:-1]:
        _known(type(node), part, path)
        child = getattr(node, part)
        if not isinstance(child, BaseModel):
            raise ValueError(f"axes: {path!r}: {part!r} is not a section")
        node = child
    return _known(type(node), parts[-1], path), parts[-1]


def _backend_model(root: BaseModel) -> type[BaseModel]:
    """The model of one `backends` entry (`BackendSpec`), read off the experiment's own
    field type, so this module needs no import of the config that imports it."""
    (entry,) = get_args(type(root).model_fields["backends"].annotation)
    if not (isinstance(entry, type) and issubclass(entry, BaseModel)):
        raise ValueError("axes: the experiment's backends are not models")
    return entry


def _known(model: type[BaseModel], name: str, path: str) -> type[BaseModel]:
    if name not in model.model_fields:
        allowed = ", ".join(sorted(model.model_fields))
        raise ValueError(
            f"axes: {path!r}: {model.__name__} has no field {name!r}; allowed: {allowed}"
        )
    return model


def _check_value(root: BaseModel, path: str, value: Any) -> None:
    model, name = _field_model(root, path)
    info = model.model_fields[name]
    probe = create_model("AxisValue", value=(cast(Any, info.annotation), info))
    try:
        probe.model_validate({"value": value})
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"]
        raise ValueError(f"axes: {path!r}: value {value!r} is not allowed: {problem}") from None


def check_axes(
    root: BaseModel, axes: Mapping[str, list[Any]], variants: list[dict[str, Any]]
) -> int:
    """Validate every axis path and value; return the number of combinations.

    Args:
        root: the experiment config (an `ExperimentConfig`).
        axes: path -> values (cartesian product).
        variants: explicit combinations, each a path -> value mapping.

    Raises:
        ValueError: an unknown path, an empty value list, a value its field refuses, or
            two paths with the same short name and value that would make ids collide.
    """
    for path, values in axes.items():
        if not values:
            raise ValueError(f"axes: {path!r} has no values")
        for value in values:
            _check_value(root, path, value)
    for index, variant in enumerate(variants):
        for path, value in variant.items():
            try:
                _check_value(root, path, value)
            except ValueError as exc:
                raise ValueError(f"variants[{index}]: {exc}") from None
    combos = expand_variants(root, axes, variants)
    ids = [axis_label(c) for c in combos]
    if len(set(ids)) != len(ids):
        raise ValueError("axes/variants: two combinations are the same (duplicate variants)")
    return len(combos)


def _default(root: BaseModel, path: str) -> Any:
    """The value a path has in the experiment when no variant sets it."""
    parts = path.split(".")
    if parts[0] == "backend":
        model, name = _field_model(root, path)
        return model.model_fields[name].default
    node: Any = root
    for part in parts:
        node = getattr(node, part)
    return node


def expand_variants(
    root: BaseModel, axes: Mapping[str, list[Any]], variants: list[dict[str, Any]]
) -> list[Variant]:
    """Every combination, in a stable order: variants (in order) x the axes' product.

    Each combination names every path of the axes and variants (defaults filled in).
    None of them: one empty combination (the experiment has no axes).
    """
    paths = sorted({*axes, *(p for v in variants for p in v)})
    if not paths:
        return [()]
    names = sorted(axes)
    out: list[Variant] = []
    for base in variants or [{}]:
        for values in itertools.product(*(axes[n] for n in names)):
            chosen = {**base, **dict(zip(names, values, strict=True))}
            out.append(tuple((p, chosen[p] if p in chosen else _default(root, p)) for p in paths))
    return out


def axis_label(variant: Variant) -> str:
    """The id segment of a variant: `short-value` pairs joined by `+`, sorted by short
    name (the path's last part, or the whole path when two paths share it)."""
    last = [path.rsplit(".", 1)[-1] for path, _ in variant]
    parts = []
    for (path, value), short in zip(variant, last, strict=True):
        name = short if last.count(short) == 1 else path
        parts.append(f"{name}-{_text(value)}")
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", "+".join(sorted(parts)))


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else str(value)


def apply_to_config(config: Any, variant: Variant) -> Any:
    """The experiment config with the variant's section fields set (validated again)."""
    sections: dict[str, dict[str, Any]] = {}
    for path, value in variant:
        head, _, rest = path.partition(".")
        if head in EXPERIMENT_SECTIONS:
            _set(sections.setdefault(head, getattr(config, head).model_dump()), rest, value)
    if not sections:
        return config
    update = {h: type(getattr(config, h)).model_validate(d) for h, d in sections.items()}
    return config.model_copy(update=update)


def apply_to_backend(backend: Any, variant: Variant) -> Any:
    """The backend with the variant's profile fields as overrides and its own fields set."""
    overrides = dict(backend.overrides)
    fields: dict[str, Any] = {}
    for path, value in variant:
        if path.startswith("backend.profile."):
            overrides[path.removeprefix("backend.profile.")] = value
        elif path.startswith("backend."):
            fields[path.removeprefix("backend.")] = value
    if backend.kind == "real":  # no profile: only its own fields (the transport) apply
        overrides = dict(backend.overrides)
    if overrides == backend.overrides and not fields:
        return backend
    return backend.model_copy(update={"overrides": overrides, **fields})


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        data = data[part]
    data[last] = value
