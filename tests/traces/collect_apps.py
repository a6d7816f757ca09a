"""Instrumented agent apps for the `looplab collect` tests: each exports its spans through
the real OTLP/HTTP exporter (opentelemetry-exporter-otlp-proto-http) to a URL.

- `genai_spans`: GenAI-convention spans made with the plain OpenTelemetry SDK (no
  instrumentation library), as an agent framework's own tracing writes them.
- `openinference_openai_app`: an openai-client agent loop (streamed chat completions with a
  tool call) instrumented by openinference-instrumentation-openai, inside an AGENT span.
- `agents_sdk_app`: an OpenAI Agents SDK agent with a function tool, traced by
  openinference-instrumentation-openai-agents.
- `langchain_app`: a LangChain tool-calling loop (`ChatOpenAI.bind_tools`, streamed, a
  `@tool`) instrumented by openinference-instrumentation-langchain, inside an AGENT span.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import openai
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic import SecretStr

TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "run",
            "description": "Run a shell command.",
            "parameters": {
                "type": "object",
                "properties": {"cmd": {"type": "string"}},
                "required": ["cmd"],
            },
        },
    }
]


@contextmanager
def exporting(url: str, service: str) -> Iterator[TracerProvider]:
    """A tracer provider batching spans to `url` (gzip protobuf); flushed and shut on exit."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    exporter = OTLPSpanExporter(endpoint=url, compression=Compression.Gzip, timeout=10)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    try:
        yield provider
    finally:
        provider.force_flush()
        provider.shutdown()


def genai_spans(provider: TracerProvider) -> None:
    """An `invoke_agent` span with two `chat` calls and an `execute_tool` between them."""
    tracer = provider.get_tracer("an-agent-framework")
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "fixer"}
    with tracer.start_as_current_span("invoke_agent fixer", attributes=agent):
        for step, (prompt, completion) in enumerate([(120, 30), (180, 12)]):
            chat = {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-test",
                "gen_ai.usage.input_tokens": prompt,
                "gen_ai.usage.output_tokens": completion,
                "gen_ai.response.finish_reasons": ["tool_calls" if step == 0 else "stop"],
            }
            with tracer.start_as_current_span("chat gpt-test", attributes=chat):
                pass
            if step == 0:
                tool = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "run",
                    "gen_ai.tool.call.id": "call_1",
                }
                with tracer.start_as_current_span("execute_tool run", attributes=tool):
                    pass


def openinference_openai_app(provider: TracerProvider, base_url: str, steps: int) -> int:
    """An agent loop over the openai client (streamed), its tools in TOOL spans, inside an
    AGENT span; `openai` is instrumented by OpenInference for the duration.

    Returns:
        The number of tool calls it ran.
    """
    from openinference.instrumentation.openai import OpenAIInstrumentor

    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer("an-openai-app")
    ran = 0
    try:
        client = openai.OpenAI(base_url=base_url, api_key="unused")
        messages: list[Any] = [{"role": "user", "content": "fix the bug"}]
        kind = {"openinference.span.kind": "AGENT", "agent.name": "oi-agent"}
        with tracer.start_as_current_span("oi-agent", attributes=kind):
            for _ in range(steps):
                calls = _streamed_call(client, messages)
                if not calls:
                    break
                messages.append({"role": "assistant", "content": None, "tool_calls": calls})
                for call in calls:
                    attrs = {"openinference.span.kind": "TOOL", "tool.name": "run"}
                    with tracer.start_as_current_span("run", attributes=attrs):
                        messages.append(
                            {"role": "tool", "tool_call_id": call["id"], "content": "1 passed"}
                        )
                        ran += 1
        client.close()
    finally:
        instrumentor.uninstrument()
    return ran


def langchain_app(provider: TracerProvider, base_url: str, steps: int) -> int:
    """A LangChain loop: a streamed `ChatOpenAI` with one bound `@tool`, each tool call run
    with `tool.invoke`, inside an AGENT span; LangChain instrumented by OpenInference (LLM
    and TOOL spans) for the duration.

    Returns:
        The number of tool calls it ran.
    """
    from langchain_core.messages import BaseMessage, HumanMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from openinference.instrumentation.langchain import LangChainInstrumentor

    @tool
    def run(cmd: str) -> str:
        """Run a shell command."""
        return "1 passed"

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer("a-langchain-app")
    ran = 0
    try:
        chat = ChatOpenAI(
            base_url=base_url,
            api_key=SecretStr("unused"),
            model="looplab-lorem",
            streaming=True,
            stream_usage=True,
        )
        model = chat.bind_tools([run])
        messages: list[BaseMessage] = [HumanMessage("fix the bug")]
        kind = {"openinference.span.kind": "AGENT", "agent.name": "lc-agent"}
        with tracer.start_as_current_span("lc-agent", attributes=kind):
            for _ in range(steps):
                reply = model.invoke(messages)
                messages.append(reply)
                if not reply.tool_calls:
                    break
                for call in reply.tool_calls:
                    messages.append(run.invoke(call))
                    ran += 1
    finally:
        instrumentor.uninstrument()
    return ran


def _streamed_call(client: openai.OpenAI, messages: list[Any]) -> list[dict[str, Any]]:
    """One streamed chat completion; its tool calls in the assistant message's shape."""
    stream = client.chat.completions.create(
        model="looplab-lorem",
        messages=messages,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    calls: dict[int, dict[str, Any]] = {}
    for chunk in stream:
        for delta in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
            call = calls.setdefault(
                delta.index,
                {"id": delta.id, "type": "function", "function": {"name": "", "arguments": ""}},
            )
            if delta.function and delta.function.name:
                call["function"]["name"] = delta.function.name
            if delta.function and delta.function.arguments:
                call["function"]["arguments"] += delta.function.arguments
    return [calls[i] for i in sorted(calls)]


async def agents_sdk_app(provider: TracerProvider, base_url: str, tracing: str) -> str:
    """An OpenAI Agents SDK agent with one function tool (Responses API), its SDK traces
    turned into OpenTelemetry spans by `tracing`: `openinference`
    (openinference-instrumentation-openai-agents: OpenInference spans) or `genai`
    (opentelemetry-instrumentation-openai-agents: GenAI-convention spans). The SDK's trace
    processors are put back as they were afterwards.

    Returns:
        The agent's final output.
    """
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_trace_processors
    from agents.tracing import get_trace_provider

    @function_tool
    def run(cmd: str) -> str:
        """Run a shell command."""
        return json.dumps({"cmd": cmd, "exit": 0})

    # the SDK has no public getter for its processors; both instrumentations replace them
    registered = list(get_trace_provider()._multi_processor._processors)  # type: ignore[attr-defined]
    instrumentor = _agents_instrumentor(tracing)
    instrumentor.instrument(tracer_provider=provider)
    try:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="unused")
        model = OpenAIResponsesModel(model="looplab-lorem", openai_client=client)
        agent = Agent(name="sdk-fixer", instructions="Fix it.", tools=[run], model=model)
        result = await Runner.run(agent, "fix the bug", max_turns=6)
        await client.close()
    finally:
        instrumentor.uninstrument()
        set_trace_processors(registered)
    return str(result.final_output)


def _agents_instrumentor(tracing: str) -> Any:
    """The Agents SDK instrumentor of `tracing` (see `agents_sdk_app`)."""
    if tracing == "openinference":
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        return OpenAIAgentsInstrumentor()
    from opentelemetry.instrumentation.openai_agents import (
        OpenAIAgentsInstrumentor as GenAIAgentsInstrumentor,
    )

    return GenAIAgentsInstrumentor(replace_existing_processors=True)
