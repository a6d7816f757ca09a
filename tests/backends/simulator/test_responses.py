"""The Responses API (`POST /v1/responses`) of the simulator, through the real openai client."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import openai
import pytest

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.backends.simulator.responses import chat_body
from looplab.latency.presets import resolve_profile

FUNCTION_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "read_file",
    "description": "Read a file.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}


@pytest.fixture
def reasoning_server() -> Any:
    """A fast simulator whose replies carry 7 hidden reasoning tokens."""
    profile = resolve_profile(
        "fast-750", ["decode_tps=5000", "ttft_s=0", "output_tokens=30", "reasoning_tokens=7"]
    )
    with SimulatorServer(profile) as server:
        yield server


async def test_non_streaming_text_and_usage(reasoning_server: SimulatorServer) -> None:
    """A plain request returns a completed response: text, usage with reasoning tokens."""
    client = openai.AsyncOpenAI(base_url=reasoning_server.base_url, api_key="k")
    response = await client.responses.create(
        model="looplab-lorem", input="Explain.", instructions="Be brief."
    )
    await client.close()
    assert response.status == "completed"
    assert len(response.output_text.split()) == 30
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert response.usage is not None
    assert response.usage.output_tokens == 37
    assert response.usage.output_tokens_details.reasoning_tokens == 7


async def test_streaming_event_sequence_with_a_function_call(
    reasoning_server: SimulatorServer,
) -> None:
    """A streamed tool call comes as the typed event sequence, ending in response.completed."""
    client = openai.AsyncOpenAI(base_url=reasoning_server.base_url, api_key="k")
    async with client.responses.stream(
        model="looplab-lorem", input="Read the pager.", tools=[FUNCTION_TOOL]
    ) as stream:
        kinds = [event.type async for event in stream]
        final = await stream.get_final_response()
    await client.close()
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert "response.function_call_arguments.delta" in kinds
    assert kinds.index("response.function_call_arguments.done") < len(kinds) - 2
    call = final.output[-1]
    assert call.type == "function_call"
    assert call.name == "read_file"
    assert '"path"' in call.arguments
    assert final.usage is not None and final.usage.output_tokens_details.reasoning_tokens == 7


async def test_streamed_text_deltas_add_up(reasoning_server: SimulatorServer) -> None:
    """output_text.delta events concatenate to the done text and the final output."""
    client = openai.AsyncOpenAI(base_url=reasoning_server.base_url, api_key="k")
    deltas: list[str] = []
    done = ""
    async with client.responses.stream(model="looplab-lorem", input="Hi") as stream:
        async for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
            elif event.type == "response.output_text.done":
                done = event.text
        final = await stream.get_final_response()
    await client.close()
    assert "".join(deltas) == done == final.output_text


async def test_unsupported_state_is_a_clear_400(fast_server: SimulatorServer) -> None:
    """previous_response_id is refused with a 400 naming the field."""
    client = openai.AsyncOpenAI(base_url=fast_server.base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model="looplab-lorem", input="x", previous_response_id="resp_1"
        )
    await client.close()
    assert caught.value.body is not None
    assert caught.value.body["param"] == "previous_response_id"  # type: ignore[index]


AGENT_PROGRAM = textwrap.dedent(
    """
    import asyncio
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    @function_tool
    def read_file(path: str) -> str:
        \"\"\"Read a file.\"\"\"
        return "def pager(): pass"

    agent = Agent(name="fixer", instructions="Fix bugs.", tools=[read_file],
                  model="looplab-lorem")
    result = asyncio.run(Runner.run(agent, "Fix pager.py", max_turns=4))
    print("FINAL", len(result.final_output.split()))
    """
)


def test_openai_agents_default_model_works(fast_server: SimulatorServer, tmp_path: Path) -> None:
    """The Agents SDK's default (Responses) model runs a tool-using agent against serve."""
    program = tmp_path / "agent.py"
    program.write_text(AGENT_PROGRAM)
    env = {**os.environ, "OPENAI_BASE_URL": fast_server.base_url, "OPENAI_API_KEY": "k"}
    done = subprocess.run(
        [sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "FINAL 40" in done.stdout


def test_a_turns_message_and_its_calls_are_one_assistant_message() -> None:
    """Input items of one assistant turn (its text, then its function calls, as a replayed
    reply has them) become one chat message with that text and those tool_calls, so a
    policy that counts assistant turns counts it once; `strict: false` is chat's default."""
    chat = chat_body(
        {
            "model": "m",
            "input": [
                {"type": "message", "role": "user", "content": "Fix it."},
                {"type": "message", "role": "assistant", "content": "Reading."},
                {"type": "function_call", "call_id": "c1", "name": "read_file", "arguments": "{}"},
                {"type": "function_call", "call_id": "c2", "name": "run", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "x"},
            ],
            "tools": [{**FUNCTION_TOOL, "strict": False}],
        }
    )
    roles = [m["role"] for m in chat["messages"]]
    assert roles == ["user", "assistant", "tool"]
    assistant = chat["messages"][1]
    assert assistant["content"] == "Reading."
    assert [c["id"] for c in assistant["tool_calls"]] == ["c1", "c2"]
    assert "strict" not in chat["tools"][0]["function"]
