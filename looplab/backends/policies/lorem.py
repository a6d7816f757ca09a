"""`lorem`: text of a requested length distribution, and schema-shaped tool calls.

For load tests and demos. Lengths come from the profile's `output_tokens` distribution;
every draw is seeded by the profile seed and the conversation, so a conversation always
gets the same reply. Behaviour with tools:

- `tool_choice` `none`, or no tools: text only;
- `tool_choice` naming a function, or `required`: one call (to that function / a seeded pick);
- `auto` (the default): a tool call unless the last message is a tool result, in which
  case a text answer, so an agent loop alternates call -> result -> answer and ends.

Arguments fill the function's JSON Schema (required properties, or all when none are
required) with lorem strings, numbers, booleans, enum members, empty arrays and objects.
"""

from __future__ import annotations

import json
import random
import secrets
from typing import Any

from looplab.backends.policies.base import PlannedToolCall, PolicyContext, Reply
from looplab.backends.protocol import ChatRequest, ToolSpec

__all__ = ["LoremPolicy"]

WORDS = (
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


class LoremPolicy:
    """Seeded lorem-ipsum replies of profile-drawn length (see the module docstring)."""

    name = "lorem"

    def reply(self, request: ChatRequest, context: PolicyContext) -> Reply:
        """Text of `output_tokens` length, or one tool call, per the module rules."""
        rng = context.rng
        tool = self._tool_to_call(request, rng)
        if tool is None:
            length = max(1, round(context.profile.output_tokens.sample(rng)))
            return Reply(content_pieces=lorem_pieces(length, rng))
        arguments = json.dumps(_fill_schema(tool.function.parameters or {}, rng, depth=0))
        call = PlannedToolCall(
            id=f"call_{secrets.token_hex(12)}",
            name=tool.function.name,
            argument_pieces=context.tokenizer.split(arguments),
        )
        return Reply(tool_calls=[call])

    def _tool_to_call(self, request: ChatRequest, rng: random.Random) -> ToolSpec | None:
        tools = request.tools or []
        if not tools or request.tool_choice == "none":
            return None
        forced = request.forced_tool()
        if forced is not None:
            return next((t for t in tools if t.function.name == forced), None)
        if request.tool_choice != "required" and request.messages[-1].role == "tool":
            return None
        return rng.choice(tools)


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


def _fill_schema(schema: dict[str, Any], rng: random.Random, depth: int) -> Any:
    if schema.get("enum"):
        return rng.choice(schema["enum"])
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        properties: dict[str, Any] = schema.get("properties") or {}
        names = schema.get("required") or list(properties)
        if depth > 3:
            return {}
        return {name: _fill_schema(properties.get(name, {}), rng, depth + 1) for name in names}
    if kind == "string":
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
    if kind == "integer":
        return rng.randint(0, 100)
    if kind == "number":
        return round(rng.uniform(0, 100), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return []
    return None
