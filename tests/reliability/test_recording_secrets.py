"""Secrets a client sends never reach a recording, wherever the upstream echoes them
(issue 36, finding 7), and `--upstream http://h/v1?key=K` keeps its query after the path.

An upstream on loopback answers every chat call with a completion whose text, and whose
`echo` field, repeat every request header and the URL it was called on. The real openai
client sends seven planted credentials (Authorization, x-api-key, x-goog-api-key,
api-key, Cookie, a custom auth header, a custom token header) through a real
`ProxyServer --record`, plus a key in the upstream URL's query; every file of the
recording is then searched for each planted value.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from looplab.backends.proxy.app import ProxyServer
from looplab.latency.presets import resolve_profile
from looplab.serving.appserver import AppServer

pytestmark = [pytest.mark.reliability]

HEADERS = {
    "x-goog-api-key": "PLANTEDgoog1A2b3C4",
    "x-api-key": "PLANTEDxapi5D6e7F8",
    "api-key": "PLANTEDazure9G0h1I",
    "cookie": "session=PLANTEDcookie2J3k4L; theme=dark",
    "x-custom-auth": "PLANTEDcustom5M6n7O",
    "x-team-token": "PLANTEDtoken8P9q0R",
}
AUTHORIZATION = "PLANTEDbearer1S2t3U"
QUERY_KEY = "PLANTEDquery4V5w6X"
PLANTED = [AUTHORIZATION, QUERY_KEY, *(v.split("=")[-1].split(";")[0] for v in HEADERS.values())]


def _echo_app(seen: list[str]) -> Starlette:
    """An upstream whose reply repeats the request's headers and URL (`seen`: the URLs)."""

    async def chat(request: Request) -> Response:
        seen.append(str(request.url))
        echoed = {"headers": dict(request.headers), "url": str(request.url)}
        content = f"you sent {echoed}"
        reply = {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8},
            "echo": echoed,
        }
        return JSONResponse(reply)

    async def anything(request: Request) -> Response:
        seen.append(str(request.url))
        return JSONResponse({"error": {"message": f"no route {request.url}"}}, status_code=404)

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/{path:path}", anything, methods=["POST"]),
        ]
    )


@pytest.fixture
def echo() -> Iterator[tuple[str, list[str]]]:
    """The echoing upstream's root and the URLs it was called on."""
    seen: list[str] = []
    with AppServer(_echo_app(seen), name="echo-upstream") as server:
        yield server.base_url, seen


@pytest.mark.parametrize("query", [False, True], ids=["headers", "headers+query"])
def test_echoed_credentials_never_reach_the_recording(
    echo: tuple[str, list[str]], tmp_path: Path, campaign: Any, query: bool
) -> None:
    """Seven planted header credentials (and one URL query value), echoed by the upstream
    in its body: none is in any file of the recording; the upstream was called on
    `/v1/chat/completions?key=...`, not on a path with the query inside it."""
    root, seen = echo
    store = tmp_path / "rec"
    upstream = f"{root}?key={QUERY_KEY}" if query else root
    planted = PLANTED if query else [v for v in PLANTED if v != QUERY_KEY]
    with ProxyServer(resolve_profile("fast-750"), upstream=upstream, record=store) as proxy:
        client = openai.OpenAI(
            base_url=proxy.base_url, api_key=AUTHORIZATION, max_retries=0, default_headers=HEADERS
        )
        reply = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        client.close()
    assert seen and seen[0].split("?")[0].endswith("/v1/chat/completions"), seen
    assert not query or f"key={QUERY_KEY}" in seen[0].split("?", 1)[-1]
    assert "you sent" in (reply.choices[0].message.content or "")
    written = "".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in store.rglob("*")
        if path.is_file()
    )
    assert "you sent" in written  # the echoed reply is there, scrubbed
    found = [value for value in planted if value in written]
    campaign.add("proxy planted secrets", len(planted))
    campaign.add("proxy secrets found", len(found))
    assert found == [], f"{len(found)} of {len(planted)} planted values in the recording"
