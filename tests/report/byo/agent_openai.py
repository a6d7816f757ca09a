# mypy: ignore-errors
# (a stand-in for user code, typed as users write it; not looplab code)
"""A plain openai-client agent: call the model, run its `lookup` tool calls, repeat until
it answers. With LOOPLAB_OTLP set (an OTLP/HTTP traces endpoint) it also emits its own
OpenTelemetry GenAI spans (invoke_agent / chat / execute_tool) there. With
BYO_VOLATILE_TOOLS=1 its tool prints what real tools print: a time and a temporary path,
different on every run."""

from __future__ import annotations

import json
import os
import tempfile
import time
from contextlib import nullcontext

from openai import OpenAI

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a fact up.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
]


def tracer():  # type: ignore[no-untyped-def]
    endpoint = os.environ.get("LOOPLAB_OTLP")
    if not endpoint:
        return None, None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "openai-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return provider, provider.get_tracer("agent")


def main() -> None:
    provider, trace = tracer()
    span = (
        (lambda name, **a: trace.start_as_current_span(name, attributes=a))
        if trace
        else (lambda name, **a: nullcontext())
    )
    client = OpenAI()
    messages: list[dict] = [
        {"role": "user", "content": "What is the answer? Look up three facts first."}
    ]
    with span(
        "invoke_agent openai-agent",
        **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "openai-agent"},
    ):
        while True:
            with span(
                "chat stand-in",
                **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "stand-in"},
            ) as chat:
                stream = client.chat.completions.create(
                    model="stand-in",
                    messages=messages,
                    tools=TOOLS,
                    stream=True,
                    stream_options={"include_usage": True},
                )
                content, calls = "", {}
                for chunk in stream:
                    if chunk.usage and chat is not None:
                        chat.set_attribute("gen_ai.usage.input_tokens", chunk.usage.prompt_tokens)
                        chat.set_attribute(
                            "gen_ai.usage.output_tokens", chunk.usage.completion_tokens
                        )
                    for choice in chunk.choices:
                        content += choice.delta.content or ""
                        for call in choice.delta.tool_calls or []:
                            slot = calls.setdefault(
                                call.index, {"id": call.id, "name": "", "arguments": ""}
                            )
                            slot["name"] += call.function.name or ""
                            slot["arguments"] += call.function.arguments or ""
            message = {"role": "assistant", "content": content}
            if calls:
                message["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                    for c in calls.values()
                ]
            messages.append(message)
            if not calls:
                break
            for c in calls.values():
                with span(
                    "execute_tool lookup",
                    **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"},
                ):
                    time.sleep(0.3)  # the tool's work
                    result = f"fact about {json.loads(c['arguments'])['q']}"
                    if os.environ.get("BYO_VOLATILE_TOOLS"):
                        with tempfile.NamedTemporaryFile(prefix="lookup-") as scratch:
                            result += f" in {time.perf_counter() % 1:.3f}s ({scratch.name})"
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": result})
    print(content[:40])
    if provider is not None:
        provider.shutdown()


if __name__ == "__main__":
    main()
