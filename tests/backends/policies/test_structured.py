"""Structured output: `response_format` replies validate against the schema."""

from __future__ import annotations

import json
import random
from typing import Literal

import jsonschema
import openai
import pytest
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from looplab.backends.policies.schema_fill import fill_schema
from looplab.backends.simulator.inprocess import SimulatorServer


class Step(BaseModel):
    """One step of a plan."""

    explanation: str = Field(min_length=12)
    output: int = Field(ge=3, le=9)


class Plan(BaseModel):
    """A plan with nested models, a literal, an optional and a list."""

    steps: list[Step] = Field(min_length=2)
    kind: Literal["fix", "test"]
    note: str | None
    tags: list[str]
    score: float = Field(gt=0, lt=1)


async def test_parse_with_a_pydantic_model(openai_client: openai.AsyncOpenAI) -> None:
    """chat.completions.parse(response_format=Model) returns a parsed, valid instance."""
    completion = await openai_client.chat.completions.parse(
        model="looplab-lorem",
        messages=[{"role": "user", "content": "Plan the fix."}],
        response_format=Plan,
    )
    parsed = completion.choices[0].message.parsed
    assert isinstance(parsed, Plan)
    assert len(parsed.steps) >= 2


async def test_streamed_json_schema_validates(openai_client: openai.AsyncOpenAI) -> None:
    """A streamed json_schema reply is paced like text and validates against the schema."""
    schema = Plan.model_json_schema()
    stream = await openai_client.chat.completions.create(
        model="looplab-lorem",
        messages=[{"role": "user", "content": "Plan."}],
        response_format={"type": "json_schema", "json_schema": {"name": "plan", "schema": schema}},
        stream=True,
    )
    text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    jsonschema.validate(json.loads(text), schema)


async def test_json_object_is_an_object(openai_client: openai.AsyncOpenAI) -> None:
    """json_object mode answers a JSON object."""
    completion = await openai_client.chat.completions.create(
        model="looplab-lorem",
        messages=[{"role": "user", "content": "JSON please."}],
        response_format={"type": "json_object"},
    )
    assert isinstance(json.loads(completion.choices[0].message.content or ""), dict)


async def test_bad_response_format_is_a_400(openai_client: openai.AsyncOpenAI) -> None:
    """An unknown response_format type is a 400 naming the field."""
    with pytest.raises(openai.BadRequestError) as caught:
        await openai_client.chat.completions.create(
            model="looplab-lorem",
            messages=[{"role": "user", "content": "x"}],
            response_format={"type": "yaml"},  # type: ignore[arg-type,typeddict-item]
        )
    assert caught.value.body["param"] == "response_format.type"  # type: ignore[index]


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
async def test_langchain_with_structured_output(fast_server: SimulatorServer, method: str) -> None:
    """LangChain's with_structured_output returns a valid model instance."""
    model = ChatOpenAI(base_url=fast_server.base_url, api_key="k", model="looplab-lorem")  # type: ignore[arg-type]
    result = await model.with_structured_output(Plan, method=method).ainvoke("Plan.")  # type: ignore[arg-type]
    assert isinstance(result, Plan)


def test_fill_schema_covers_refs_unions_and_bounds() -> None:
    """Filled values validate for $ref/$defs, anyOf, allOf, enums, formats and bounds."""
    schema = {
        "$defs": {"Item": {"type": "object", "properties": {"n": {"type": "integer",
                  "minimum": 10, "maximum": 12, "multipleOf": 2}}, "required": ["n"]}},
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "minItems": 3},
            "when": {"type": "string", "format": "date-time"},
            "mail": {"type": "string", "format": "email"},
            "either": {"anyOf": [{"type": "null"}, {"type": "number", "exclusiveMinimum": 5}]},
            "both": {"allOf": [{"type": "object", "properties": {"a": {"const": 1}},
                               "required": ["a"]}]},
            "pick": {"enum": ["x", "y"]},
            "short": {"type": "string", "maxLength": 3},
        },
        "required": ["items", "when", "mail", "either", "both", "pick", "short"],
        "additionalProperties": False,
    }  # fmt: skip
    for seed in range(20):
        value = fill_schema(schema, random.Random(seed))
        jsonschema.validate(value, schema, format_checker=jsonschema.FormatChecker())
