"""langchain-openai's ChatOpenAI works against the simulator unchanged."""

from __future__ import annotations

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from looplab.backends.simulator.inprocess import SimulatorServer


@tool
def run_tests(path: str) -> str:
    """Run the tests under path."""
    return "ok"


async def test_chat_openai_streams_text(fast_server: SimulatorServer) -> None:
    """ChatOpenAI streams text and reports usage from the simulator."""
    model = ChatOpenAI(
        base_url=fast_server.base_url,
        api_key="unused",
        model="looplab-lorem",
        stream_usage=True,  # type: ignore[arg-type]
    )
    pieces = [chunk async for chunk in model.astream("Explain the bug.")]
    text = "".join(str(p.content) for p in pieces)
    assert len(text.split()) >= 10
    merged = pieces[0]
    for piece in pieces[1:]:
        merged = merged + piece
    assert merged.usage_metadata is not None
    assert merged.usage_metadata["output_tokens"] == 40


async def test_chat_openai_tool_calls(fast_server: SimulatorServer) -> None:
    """ChatOpenAI with bound tools receives a parsed tool call."""
    model = ChatOpenAI(base_url=fast_server.base_url, api_key="unused", model="looplab-lorem")  # type: ignore[arg-type]
    message = await model.bind_tools([run_tests]).ainvoke("Run the tests.")
    assert message.tool_calls
    assert message.tool_calls[0]["name"] == "run_tests"
    assert isinstance(message.tool_calls[0]["args"]["path"], str)
