# mypy: ignore-errors
# (a stand-in for user code, typed as users write it; not looplab code)
"""A plain openai-client agent for issue 44's scenario: `python agent_models.py MODEL
TASK` calls MODEL, runs its `lookup` tool calls, repeats until it answers, and exits 1
when the answer is not 42 (its own judgement of the task, the exit code `wrap` records)."""

from __future__ import annotations

import json
import sys
import time

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


def main() -> None:
    model, task = sys.argv[1], sys.argv[2]
    client = OpenAI()
    name = task.rsplit("/", 1)[-1]  # `lookup/t4` -> `t4`
    messages = [{"role": "user", "content": f"task {name}: what is the answer?"}]
    while True:
        reply = client.chat.completions.create(model=model, messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            time.sleep(0.05)  # the tool's work
            result = f"fact about {json.loads(call.function.arguments)['q']}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    print(message.content[:40])
    sys.exit(0 if "42" in (message.content or "") else 1)


if __name__ == "__main__":
    main()
