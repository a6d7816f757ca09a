"""Lorem values that validate against a JSON Schema: tool-call arguments, structured output.

`fill_schema(schema, rng)` builds a value of the schema's shape from seeded lorem words,
numbers and booleans. It follows what OpenAI's structured outputs (and pydantic's
`model_json_schema()`) emit: `$ref` into `$defs`/`definitions`, `anyOf`/`oneOf` (the
first non-null branch), `allOf` (merged), `const`, `enum`, type lists, objects (required
properties, or all when none are required; `additionalProperties` never needed), arrays
(`minItems`..`maxItems`, one item by default), strings (`minLength`/`maxLength`, the
`date`, `date-time`, `time`, `email`, `uri`, `uuid` formats), numbers and integers within
`minimum`/`maximum` (exclusive bounds too, `multipleOf` for integers).

`response_format(request)` reads a chat request's `response_format` (`json_schema` or
`json_object`) and refuses a malformed one with a 400 naming the field.
"""

from __future__ import annotations

import math
import random
from typing import Any

from looplab.backends.simulator.protocol import ApiError, ChatRequest

__all__ = ["WORDS", "fill_schema", "lorem_pieces", "response_format"]

WORDS: tuple[str, ...] = (
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "ut",
    "labore",
    "et",
    "dolore",
    "magna",
    "aliqua",
    "enim",
    "ad",
    "minim",
    "veniam",
    "quis",
    "nostrud",
    "exercitation",
    "ullamco",
    "laboris",
    "nisi",
    "aliquip",
    "ex",
    "ea",
    "commodo",
    "consequat",
    "duis",
    "aute",
    "irure",
    "in",
    "reprehenderit",
    "voluptate",
    "velit",
    "esse",
    "cillum",
    "fugiat",
    "nulla",
    "pariatur",
    "excepteur",
    "sint",
    "occaecat",
    "cupidatat",
    "non",
    "proident",
    "sunt",
    "culpa",
    "qui",
    "officia",
    "deserunt",
    "mollit",
    "anim",
    "id",
    "est",
)
"""The lorem vocabulary (also the `lorem` policy's text)."""

_MAX_DEPTH = 6


def fill_schema(schema: Any, rng: random.Random, *, all_properties: bool = False) -> Any:
    """A value that validates against `schema` (see the module docstring).

    Args:
        schema: a JSON Schema (dict); anything else yields a lorem string.
        rng: the seeded generator the values are drawn from.
        all_properties: fill every property, not only the required ones (structured
            output in strict mode requires all anyway).
    """
    root = schema if isinstance(schema, dict) else {}
    return _fill(root, root, rng, 0, all_properties)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    seen = 0
    while isinstance(schema.get("$ref"), str) and seen < 32:
        ref = schema["$ref"]
        target: Any = root
        for part in ref.removeprefix("#").strip("/").split("/") if ref != "#" else []:
            target = target.get(part, {}) if isinstance(target, dict) else {}
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **rest} if isinstance(target, dict) else rest
        seen += 1
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = _resolve(part, root) if isinstance(part, dict) else {}
            properties = {**merged.get("properties", {}), **part.get("properties", {})}
            required = [*merged.get("required", []), *part.get("required", [])]
            merged = {**part, **merged, "properties": properties, "required": required}
        schema = merged
    return schema


def _fill(
    schema: dict[str, Any], root: dict[str, Any], rng: random.Random, depth: int, every: bool
) -> Any:
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        branches = [b for b in schema.get(key) or [] if isinstance(b, dict)]
        if branches:
            chosen = next((b for b in branches if _resolve(b, root).get("type") != "null"), None)
            return _fill(chosen or branches[0], root, rng, depth + 1, every)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        return _object(schema, root, rng, depth, every)
    if kind == "array":
        return _array(schema, root, rng, depth, every)
    if kind == "string":
        return _string(schema, rng)
    if kind == "integer":
        return _integer(schema, rng)
    if kind == "number":
        return _number(schema, rng)
    if kind == "boolean":
        return rng.random() < 0.5
    return None


def _object(
    schema: dict[str, Any], root: dict[str, Any], rng: random.Random, depth: int, every: bool
) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties") or {}
    required = [n for n in schema.get("required") or [] if isinstance(n, str)]
    names = list(properties) if every or not required else required
    names += [n for n in required if n not in names]
    if depth >= _MAX_DEPTH:
        names = required
    return {name: _fill(properties.get(name) or {}, root, rng, depth + 1, every) for name in names}


def _array(
    schema: dict[str, Any], root: dict[str, Any], rng: random.Random, depth: int, every: bool
) -> list[Any]:
    low = int(schema.get("minItems", 0))
    high = int(schema.get("maxItems", max(low, 2)))
    count = max(low, min(high, 1)) if depth < _MAX_DEPTH else low
    prefix = schema.get("prefixItems") or []
    items: dict[str, Any] = schema["items"] if isinstance(schema.get("items"), dict) else {}
    values = [_fill(p, root, rng, depth + 1, every) for p in prefix[:count]]
    values += [_fill(items, root, rng, depth + 1, every) for _ in range(count - len(values))]
    return values


_FORMATS = {
    "date": lambda rng: f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
    "date-time": lambda rng: f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T12:00:00Z",
    "time": lambda rng: f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00",
    "email": lambda rng: f"{rng.choice(WORDS)}@example.com",
    "uri": lambda rng: f"https://example.com/{rng.choice(WORDS)}",
    "uuid": lambda rng: f"{rng.getrandbits(32):08x}-0000-4000-8000-{rng.getrandbits(48):012x}",
}


def _string(schema: dict[str, Any], rng: random.Random) -> str:
    fmt = schema.get("format")
    if fmt in _FORMATS:
        return str(_FORMATS[fmt](rng))
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    while len(text) < low:
        text += " " + rng.choice(WORDS)
    if isinstance(high, int):
        text = text[:high]
    return text


def _bounds(schema: dict[str, Any], step: float) -> tuple[float, float]:
    """The closed range a value may take; exclusive bounds are moved in by `step` (1 for
    integers; a quarter of the range for numbers)."""
    low = float(schema.get("minimum", -math.inf))
    high = float(schema.get("maximum", math.inf))
    ex_low, ex_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(ex_low, int | float) and not isinstance(ex_low, bool):
        low = max(low, float(ex_low))
    if isinstance(ex_high, int | float) and not isinstance(ex_high, bool):
        high = min(high, float(ex_high))
    if math.isinf(low) and math.isinf(high):
        low, high = 0.0, 100.0
    elif math.isinf(low):
        low = high - 100.0
    elif math.isinf(high):
        high = low + 100.0
    nudge = step if step >= 1 else (high - low) * step
    if isinstance(ex_low, int | float) and not isinstance(ex_low, bool) and low >= ex_low:
        low += nudge
    if isinstance(ex_high, int | float) and not isinstance(ex_high, bool) and high <= ex_high:
        high -= nudge
    return low, max(low, high)


def _number(schema: dict[str, Any], rng: random.Random) -> float:
    low, high = _bounds(schema, 0.25)
    value = round(rng.uniform(low, high), 4)
    return value if low <= value <= high else (low + high) / 2


def _integer(schema: dict[str, Any], rng: random.Random) -> int:
    low, high = _bounds(schema, 1)
    first, last = math.ceil(low), math.floor(high)
    step = schema.get("multipleOf")
    if isinstance(step, int) and step > 0:
        multiples = range(-(-first // step) * step, last + 1, step)
        return rng.choice(multiples) if multiples else first
    return rng.randint(first, max(first, last))


def response_format(request: ChatRequest) -> tuple[str, dict[str, Any]] | None:
    """`("json_schema", schema)`, `("json_object", {})` or None (plain text).

    Raises:
        ApiError: 400 for a malformed `response_format`.
    """
    value = (request.model_extra or {}).get("response_format")
    if value is None:
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return "json_object", {}
    if kind == "json_schema":
        spec = value.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise ApiError(
                400,
                "Missing required parameter: 'response_format.json_schema.name'.",
                param="response_format.json_schema.name",
                code="missing_required_parameter",
            )
        return "json_schema", schema if isinstance(schema, dict) else {}
    raise ApiError(
        400,
        f"Invalid value for 'response_format.type': {kind!r}; expected 'text', "
        "'json_object' or 'json_schema'.",
        param="response_format.type",
        code="invalid_value",
    )


def lorem_pieces(count: int, rng: random.Random) -> list[str]:
    """`count` lorem word pieces (one token each), capitalised like sentences."""
    pieces: list[str] = []
    sentence_left = 0
    for index in range(count):
        word = rng.choice(WORDS)
        if sentence_left == 0:
            word = word.capitalize()
            sentence_left = rng.randint(6, 14)
        sentence_left -= 1
        if sentence_left == 0 or index == count - 1:
            word += "."
        pieces.append(word if index == 0 else " " + word)
    return pieces
