"""`lorem`: text of a requested length distribution, and schema-shaped tool calls.

For load tests and demos. Lengths come from the profile's `output_tokens` distribution;
every draw is seeded by the profile seed and the conversation, so a conversation always
gets the same reply. Behaviour with tools:

- `tool_choice` `none` with a `max_completion_tokens` cap: a budgeted text call (an
  agent's planning or reflection call), answered with exactly the cap (`budget.py`);
- `tool_choice` `none`, or no tools: text only;
- `tool_choice` naming a function, or `required`: one call (to that function / a seeded pick);
- `auto` (the default): a tool call unless the last message is a tool result, in which
  case a text answer, so an agent loop alternates call -> result -> answer and ends.

Arguments fill the function's JSON Schema (required properties, or all when none are
required; `schema_fill.py`). With `response_format` `json_schema` (and no tool to call)
the text is JSON that validates against the schema, every property filled; with
`json_object` it is a small JSON object.
"""

from __future__ import annotations

import json
import random
import secrets

from looplab.backends.policies.base import PlannedToolCall, PolicyContext, Reply
from looplab.backends.policies.budget import budget_reply
from looplab.backends.policies.schema_fill import WORDS, fill_schema, lorem_pieces, response_format
from looplab.backends.simulator.protocol import ChatRequest, ToolSpec

__all__ = ["WORDS", "LoremPolicy", "lorem_pieces"]


class LoremPolicy:
    """Seeded lorem-ipsum replies of profile-drawn length (see the module docstring)."""

    name = "lorem"

    def reply(self, request: ChatRequest, context: PolicyContext) -> Reply:
        """Text of `output_tokens` length, or one tool call, per the module rules."""
        budgeted = budget_reply(request, context)
        if budgeted is not None:
            return budgeted
        rng = context.rng
        tool = self._tool_to_call(request, rng)
        structured = response_format(request)
        if tool is None and structured is not None:
            kind, schema = structured
            value = (
                fill_schema(schema, rng, all_properties=True)
                if kind == "json_schema"
                else {"answer": "".join(lorem_pieces(8, rng))}
            )
            return Reply(content_pieces=context.tokenizer.split(json.dumps(value)))
        if tool is None:
            length = max(1, round(context.profile.output_tokens.sample(rng)))
            return Reply(content_pieces=lorem_pieces(length, rng))
        arguments = json.dumps(fill_schema(tool.function.parameters or {}, rng))
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
