"""Configuration basics: strict pydantic models, YAML loading, `-c key.path=value` overrides.

Every component's config derives from `StrictModel` (`extra="forbid"`, a docstring under
every field, NaN and infinities refused). Experiment YAML is a serialized config.
Validation failures become one `ConfigError` whose message names the file, the line (when
the YAML has it), the dotted field path, what was wrong and, where the schema knows them,
the allowed values.

YAML is read with bounds, so that no input can hang or exhaust the process: at most
`MAX_YAML_BYTES` per file, `MAX_YAML_NODES` values after alias expansion (an "anchor bomb"
of a few hundred bytes is refused at once, not expanded), nesting at most `MAX_YAML_DEPTH`
deep, no recursive anchors, UTF-8 only (a bad byte is named with its offset).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from looplab.config_errors import Loc, config_error
from looplab.errors import ConfigError

__all__ = [
    "MAX_YAML_BYTES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "StrictModel",
    "apply_overrides",
    "apply_values",
    "load_model",
    "load_yaml_mapping",
    "parse_override",
    "parse_yaml",
    "replaced",
    "validate_model",
]

M = TypeVar("M", bound=BaseModel)

MAX_YAML_BYTES = 1024 * 1024
"""Largest config file read."""
MAX_YAML_NODES = 100_000
"""Most values (scalars, lists, mappings) a YAML document may hold once aliases expand."""
MAX_YAML_DEPTH = 64
"""Deepest nesting of lists and mappings in a YAML document."""
MAX_INT_DIGITS = 100  # longest YAML integer, checked before int() (which refuses 4300)


class StrictModel(BaseModel):
    """Base of every looplab config model: unknown fields are errors, docs on fields, and
    floats must be finite (a NaN or infinite timing would poison every figure after it)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)


def replaced(model: M, **changes: Any) -> M:
    """`model` with `changes` set, validated again as a new instance of its class.

    Unlike `model.model_copy(update=...)`, which copies values in unchecked, a value of the
    wrong type or range, or a misspelled field (`extra="forbid"`), fails here.

    Raises:
        pydantic.ValidationError: a change the model refuses.
    """
    return type(model).model_validate({**model.model_dump(), **changes})


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split one `-c key.path=value` override into its path and YAML-parsed value.

    Args:
        text: `a.b.c=value`; the value is parsed as YAML (`3` -> int, `[1, 2]` -> list,
            `null` -> None, anything unparseable stays a string).

    Returns:
        The path as a list of keys and the parsed value.

    Raises:
        ConfigError: when there is no `=` or the key path is empty.
    """
    key, sep, raw = text.partition("=")
    path = [part for part in key.strip().split(".") if part]
    if not sep or not path:
        raise ConfigError(
            f"override {text!r} is not of the form key.path=value (e.g. -s {key or 'key'}=3)",
            field="-s/--set",
        )
    try:
        value = parse_yaml(raw, source=text)[0] if raw.strip() else ""
    except ConfigError as exc:
        if not isinstance(exc.__cause__, yaml.YAMLError):
            raise  # too large, too deep: refused, not taken as a string
        value = raw
    return path, value


def apply_overrides(data: Mapping[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """Return a deep copy of `data` with each `key.path=value` override applied.

    Intermediate mappings are created when missing; a numeric key indexes into a list.

    Raises:
        ConfigError: when a path walks into a scalar or a list index is out of range.
    """
    return apply_values(data, (parse_override(text) for text in overrides))


def apply_values(
    data: Mapping[str, Any], values: Iterable[tuple[Sequence[str], Any]]
) -> dict[str, Any]:
    """Return a deep copy of `data` with each (key path, typed value) set: the typed form
    of `apply_overrides`, for values that are already Python values (no string round trip).

    Raises:
        ConfigError: when a path walks into a scalar or a list index is out of range.
    """
    result: dict[str, Any] = _deep_copy(dict(data))
    for path, value in values:
        node: Any = result
        for depth, key in enumerate(path[:-1]):
            node = _child_for_write(node, key, ".".join(path[: depth + 1]))
        _set_child(node, path[-1], value, ".".join(path))
    return result


def load_yaml_mapping(path: Path) -> tuple[dict[str, Any], dict[Loc, int]]:
    """Read a YAML file that must hold a mapping; also return each key path's line number.

    Raises:
        ConfigError: when the file is missing, not a regular file, too large, not UTF-8, not
            valid YAML, beyond the size/depth bounds, or not a mapping.
    """
    data, node = parse_yaml(_read_text(path), source=str(path))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"the top level must be a mapping, got {type(data).__name__}", source=str(path)
        )
    lines: dict[Loc, int] = {}
    if node is not None:
        _collect_lines(node, (), lines)
    return data, lines


def parse_yaml(text: str, *, source: str) -> tuple[Any, yaml.Node | None]:
    """Parse one YAML document within the module's bounds; return the data and its node tree.

    Raises:
        ConfigError: invalid YAML (with its line), more than `MAX_YAML_NODES` values after
            alias expansion, nesting deeper than `MAX_YAML_DEPTH`, or a recursive anchor.
    """
    if len(text) > MAX_YAML_BYTES:
        raise ConfigError(f"more than {MAX_YAML_BYTES} characters of YAML", source=source)
    try:
        node = _compose(text)
    except RecursionError:
        raise ConfigError(
            f"YAML nested too deeply (the limit is {MAX_YAML_DEPTH} levels)", source=source
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise ConfigError(f"not valid YAML: {exc}", source=where) from exc
    if node is None:
        return None, None
    _check_bounds(node, source)
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(node), node
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML: {exc}", source=source) from exc
    finally:
        loader.dispose()


def _compose(text: str) -> yaml.Node | None:
    """The document's node tree: by libyaml when PyYAML has it (a 10 kB workload model in
    1 ms instead of 15: every run and report reads a few dozen), else, and for a document
    libyaml refuses, by the pure-Python composer, whose error wording the messages quote."""
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return yaml.compose(text, Loader=fast)
        except yaml.YAMLError as exc:
            # libyaml stops at 1,000 levels, far past MAX_YAML_DEPTH: say so at once, since
            # the pure-Python scanner is quadratic in flow depth (1.5 s for 5,000 `[`).
            if "exceeded maximum nesting depth" in str(getattr(exc, "problem", "") or ""):
                raise RecursionError("nested past libyaml's limit") from None
            if _bracket_depth(text) > MAX_YAML_DEPTH:
                raise RecursionError("refused, and bracketed too deeply to re-read") from None
    return yaml.compose(text, Loader=yaml.SafeLoader)


def _bracket_depth(text: str) -> int:
    """The deepest run of `[`/`{` not yet closed, quotes ignored: an upper bound on a
    document's flow depth, read before the quadratic pure-Python scanner re-reads a
    document libyaml refused (its wording is only wanted for shallow documents)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}" and depth:
            depth -= 1
    return deepest


def _read_text(path: Path) -> str:
    """A config file's text, refusing what is not a small regular UTF-8 file."""
    try:
        if not path.is_file():
            problem = "no such file" if not path.exists() else "not a regular file"
            raise ConfigError(f"cannot read config file: {problem}", source=str(path))
        if path.stat().st_size > MAX_YAML_BYTES:
            raise ConfigError(f"larger than {MAX_YAML_BYTES} bytes", source=str(path))
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file: {exc.strerror}", source=str(path)) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}",
            source=str(path),
        ) from None


def _check_bounds(root: yaml.Node, source: str) -> None:
    """Refuse node graphs that expand too far, nest too deep, or contain themselves.

    Aliases make the node tree a graph whose expansion can be exponential in the text's
    length; sizes are computed once per node (memoised), so this takes time linear in the
    number of distinct nodes.
    """
    sizes: dict[int, tuple[int, int]] = {}
    entered: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        children = _children(node)
        if finished:
            entered.discard(key)
            count = 1 + sum(sizes[id(c)][0] for c in children)
            depth = 1 + max((sizes[id(c)][1] for c in children), default=0)
            sizes[key] = (count, depth)
            if count > MAX_YAML_NODES:
                raise ConfigError(
                    f"YAML expands to more than {MAX_YAML_NODES} values (aliases: an anchor "
                    "bomb?), refused",
                    source=source,
                )
            if depth > MAX_YAML_DEPTH:
                raise ConfigError(
                    f"YAML nested too deeply (the limit is {MAX_YAML_DEPTH} levels)", source=source
                )
            continue
        if key in sizes:
            continue
        _check_scalar(node, source)
        entered.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in entered:
                line = child.start_mark.line + 1
                raise ConfigError(f"recursive YAML anchor (line {line})", source=source)
            if id(child) not in sizes:
                stack.append((child, False))


def _check_scalar(node: yaml.Node, source: str) -> None:
    """Refuse an integer too long to convert (before `int()` sees it)."""
    digits = sum(c.isdigit() for c in node.value) if node.tag.endswith(":int") else 0
    if isinstance(node, yaml.ScalarNode) and digits > MAX_INT_DIGITS:
        where = f"line {node.start_mark.line + 1}: an integer of {digits} digits"
        raise ConfigError(f"{where} (at most {MAX_INT_DIGITS})", source=source)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def load_model(model: type[M], path: Path, overrides: Sequence[str] = ()) -> M:
    """Load `path` (YAML), apply overrides, and validate into `model`.

    Raises:
        ConfigError: naming the file, line, field and allowed values of the first problems.
    """
    data, lines = load_yaml_mapping(path)
    data = apply_overrides(data, overrides)
    return validate_model(model, data, source=str(path), lines=lines, overrides=overrides)


def validate_model(
    model: type[M],
    data: Mapping[str, Any],
    *,
    source: str | None = None,
    lines: Mapping[Loc, int] | None = None,
    overrides: Sequence[str] = (),
) -> M:
    """Validate `data` into `model`, turning pydantic's errors into one `ConfigError`.

    Args:
        model: the pydantic model class.
        data: the raw mapping (from YAML, flags or code).
        source: a name for where the data came from (a file path, `--profile`, ...).
        lines: optional map of key path -> 1-based line number, used in the message.
        overrides: the `-s key=value` overrides applied to `data`: a problem under one of
            their paths is blamed on it (`-s key=value`), not on a line of `source`.

    Raises:
        ConfigError: one line per problem, each with field path, message and allowed values.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise config_error(model, exc, source, lines or {}, overrides) from None


def _collect_lines(node: yaml.Node, loc: Loc, out: dict[Loc, int]) -> None:
    out.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            out[(*loc, key)] = key_node.start_mark.line + 1
            _collect_lines(value_node, (*loc, key), out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _collect_lines(item, (*loc, index), out)


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


def _child_for_write(node: Any, key: str, where: str) -> Any:
    if isinstance(node, dict):
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        if not isinstance(child, dict | list):
            raise ConfigError(
                f"cannot set a key inside {child!r}", field=where, allowed=["a mapping path"]
            )
        return child
    if isinstance(node, list):
        return node[_list_index(node, key, where)]
    raise ConfigError("path walks into a scalar", field=where)


def _set_child(node: Any, key: str, value: Any, where: str) -> None:
    if isinstance(node, dict):
        node[key] = value
    elif isinstance(node, list):
        node[_list_index(node, key, where)] = value
    else:
        raise ConfigError("path walks into a scalar", field=where)


def _list_index(node: list[Any], key: str, where: str) -> int:
    if not key.isdigit() or int(key) >= len(node):
        raise ConfigError(
            f"list index {key!r} out of range", field=where, allowed=[f"0..{len(node) - 1}"]
        )
    return int(key)
