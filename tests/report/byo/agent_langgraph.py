# mypy: ignore-errors
# (a stand-in for user code, typed as users write it; not looplab code)
"""A LangGraph ReAct agent (langchain-openai's ChatOpenAI on OPENAI_BASE_URL) with one
`lookup` tool: the graph calls the model, runs the tool calls, repeats until it answers."""

from __future__ import annotations

import time

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent


@tool
def lookup(q: str) -> str:
    """Look a fact up."""
    time.sleep(0.3)  # the tool's work
    return f"fact about {q}"


def main() -> None:
    model = ChatOpenAI(model="stand-in", streaming=True, max_retries=0)
    agent = create_react_agent(model, [lookup])
    result = agent.invoke(
        {"messages": [("user", "What is the answer? Look up three facts first.")]}
    )
    print(str(result["messages"][-1].content)[:40])


if __name__ == "__main__":
    main()
