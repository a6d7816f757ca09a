# mypy: ignore-errors
# (a stand-in for user code, typed as users write it; not looplab code)
"""A scripted stand-in upstream (OpenAI chat completions, streamed or not) on loopback.

Each reply is decided by the conversation: while the conversation has fewer tool results
than `TOOL_CALLS`, the reply calls the `lookup` tool; then it answers. Replies carry
usage, so the proxy and the traces have token counts. `python upstream.py PORT_FILE`
serves until killed (the port is written to PORT_FILE once listening).
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

TOOL_CALLS = 3
"""Tool calls before the final answer."""
WORDS = " ".join(f"word{i}" for i in range(40))
"""The reasoning text of each reply (about 40-60 tokens)."""


MODELS = {"big-slow": (3, 60), "small-fast": (6, 12)}
"""Two scripted models (issue 44's scenario): tool calls before the answer, words a reply.
`small-fast` answers wrong on a prompt that names task `t4`; any other name is the default
(`TOOL_CALLS`, `WORDS`)."""


def reply(body: dict) -> dict:
    """The assistant message for a request."""
    messages = body.get("messages", [])
    done = sum(1 for m in messages if m.get("role") == "tool")
    calls, words = MODELS.get(body.get("model"), (TOOL_CALLS, 40))
    text = " ".join(f"word{i}" for i in range(words))
    if body.get("model") in MODELS:
        if done < calls:
            call = {
                "id": f"call_{done}",
                "type": "function",
                "function": {"name": "lookup", "arguments": json.dumps({"q": f"fact {done}"})},
            }
            return {"role": "assistant", "content": f"Fact {done}: {text}", "tool_calls": [call]}
        wrong = body["model"] == "small-fast" and "task t4" in str(messages[0].get("content"))
        return {"role": "assistant", "content": f"The answer is {41 if wrong else 42}. {text}"}
    if done < TOOL_CALLS:
        call = {
            "id": f"call_{done}",
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"q": f"fact {done}"})},
        }
        return {
            "role": "assistant",
            "content": f"Looking up fact {done}: {WORDS}",
            "tool_calls": [call],
        }
    return {"role": "assistant", "content": f"The answer is 42. {WORDS}"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        data = json.dumps({"object": "list", "data": [{"id": "stand-in", "object": "model"}]})
        self._send(200, data.encode(), "application/json")

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        message = reply(body)
        tokens = len((message.get("content") or "").split()) * 2 + 5
        usage = {
            "prompt_tokens": 50 * len(body.get("messages", [])),
            "completion_tokens": tokens,
            "total_tokens": tokens,
        }
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        created = int(datetime.now(UTC).timestamp())
        if not body.get("stream"):
            out = {
                "id": "c1",
                "object": "chat.completion",
                "created": created,
                "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
            self._send(200, json.dumps(out).encode(), "application/json")
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()

        def chunk(delta: dict, finish_reason: str | None = None, with_usage: bool = False) -> None:
            out = {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.get("model"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }
            if with_usage:
                out["usage"] = usage
            self.wfile.write(f"data: {json.dumps(out)}\n\n".encode())

        chunk({"role": "assistant", "content": ""})
        for word in (message.get("content") or "").split(" "):
            chunk({"content": word + " "})
        for index, call in enumerate(message.get("tool_calls") or []):
            chunk({"tool_calls": [{"index": index, **call}]})
        chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            out = {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.get("model"),
                "choices": [],
                "usage": usage,
            }
            self.wfile.write(f"data: {json.dumps(out)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def _send(self, status: int, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    Path(sys.argv[1]).write_text(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
