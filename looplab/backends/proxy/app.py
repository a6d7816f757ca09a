"""The proxy's HTTP face (Starlette) and `ProxyServer`, the proxy on loopback in a thread.

Endpoints:

| method | path                                   | what                                          |
|--------|----------------------------------------|-----------------------------------------------|
| POST   | `/v1/chat/completions`                 | proxied (or replayed) and re-timed            |
| POST   | `/v1/responses`                        | the same for the Responses API                |
| WS     | `/v1/responses`                        | the Responses WebSocket (`websocket.py`)      |
| GET    | `/v1/models`                           | the upstream's list (replay: the recording's) |
| GET    | `/health`                              | liveness, profile, upstream, calls            |
| GET    | `/v1/looplab/requests/{id}/timing`     | what the proxy measured of one call           |

Every reply carries `x-looplab-request-id`, `x-looplab-profile`, `x-looplab-source`
(`upstream` / `replay`) and, where the upstream set the pace, `x-looplab-upstream-slower`.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute

from looplab.backends.proxy.core import ClientReply, Proxy
from looplab.backends.proxy.upstream import MAX_REPLY_BYTES, NO_BODY, UPSTREAM_DEADLINE_S
from looplab.backends.proxy.websocket import proxy_websocket
from looplab.backends.simulator.protocol import ApiError
from looplab.latency.profile import LatencyProfile
from looplab.serving.appserver import AppServer
from looplab.serving.guard import arrival
from looplab.urls import join_path, public_url

__all__ = ["ProxyServer", "create_proxy_app"]


def create_proxy_app(proxy: Proxy) -> Starlette:
    """The ASGI app serving `proxy` (closes its upstream connections on shutdown)."""

    async def reply(endpoint: str, request: Request) -> Response:
        body = await request.body()
        answer = await proxy.handle(endpoint, body, request.headers, arrived=arrival(request.scope))
        return _response(answer)

    async def chat(request: Request) -> Response:
        return await reply("chat", request)

    async def responses(request: Request) -> Response:
        return await reply("responses", request)

    async def models(request: Request) -> Response:
        seen = sorted({c.model for c in proxy.history.calls if c.model})
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "upstream"} for m in seen]
        if proxy.upstream is not None:
            client = proxy.http_client()
            forwarded = {k: v for k, v in request.headers.items() if k.lower() == "authorization"}
            with contextlib.suppress(Exception):
                answer = await client.get(join_path(proxy.upstream, "/models"), headers=forwarded)
                return Response(answer.content, answer.status_code, media_type="application/json")
        return JSONResponse({"object": "list", "data": data})

    async def health(request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "kind": "proxy",
                "profile": proxy.profile.name,
                "decode_tps": proxy.profile.decode_tps,
                "upstream": public_url(proxy.upstream) if proxy.upstream else None,
                "replay": str(proxy.recording.directory) if proxy.recording else None,
                "replay_policy": proxy.recording.policy_name if proxy.recording else None,
                "divergences": len(proxy.recording.divergences) if proxy.recording else 0,
                "record": str(proxy.recorder.directory) if proxy.recorder else None,
                "active": proxy.active,
                "calls": len(proxy.history.calls),
            }
        )

    async def timing(request: Request) -> Response:
        record = proxy.history.timings.get(request.path_params["request_id"])
        if record is None:
            error = ApiError(404, "No timing for that request id.", code="not_found")
            return JSONResponse(error.body(), status_code=404)
        return JSONResponse(record)

    async def not_found(request: Request, exc: Exception) -> Response:
        error = ApiError(
            404,
            f"Unknown path {request.url.path} (the looplab proxy serves "
            "/v1/chat/completions and /v1/responses)",
        )
        return JSONResponse(error.body(), status_code=404)

    async def server_error(request: Request, exc: Exception) -> Response:
        error = ApiError(500, f"Internal proxy error: {type(exc).__name__}", type="server_error")
        return JSONResponse(error.body(), status_code=500)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        proxy.warm_up()
        yield
        await proxy.aclose()

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            WebSocketRoute("/v1/responses", functools.partial(proxy_websocket, proxy)),
            Route("/v1/models", models, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/v1/looplab/requests/{request_id}/timing", timing, methods=["GET"]),
        ],
        exception_handlers={404: not_found, 500: server_error},
        lifespan=lifespan,
    )


def _response(answer: ClientReply) -> Response:
    if answer.status < 200 or answer.status in NO_BODY:  # never a body (`check_reply_status`)
        return Response(b"", answer.status, headers=answer.headers)
    if answer.stream is not None:
        return StreamingResponse(answer.stream, status_code=answer.status, headers=answer.headers)
    headers = {k: v for k, v in answer.headers.items() if k.lower() != "content-type"}
    return Response(answer.content, answer.status, headers=headers, media_type="application/json")


class ProxyServer(AppServer):
    """The pacing proxy on real loopback HTTP in a background thread (see `Proxy`).

    Args:
        profile: the profile to pace to.
        upstream, record, replay, replay_policy, api_key, upstream_timeout_s,
            upstream_deadline_s, max_reply_bytes: as for `Proxy`.
        host, port: where to bind (loopback, any free port by default).
    """

    def __init__(
        self,
        profile: LatencyProfile,
        *,
        upstream: str | None = None,
        record: Path | None = None,
        replay: Path | None = None,
        replay_policy: str = "strict",
        api_key: str | None = None,
        upstream_timeout_s: float = 600.0,
        upstream_deadline_s: float = UPSTREAM_DEADLINE_S,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.proxy = Proxy(
            profile,
            upstream=upstream,
            record=record,
            replay=replay,
            replay_policy=replay_policy,
            api_key=api_key,
            upstream_timeout_s=upstream_timeout_s,
            upstream_deadline_s=upstream_deadline_s,
            max_reply_bytes=max_reply_bytes,
        )
        super().__init__(
            create_proxy_app(self.proxy),
            host=host,
            port=port,
            name="looplab-proxy",
            lifespan="on",
        )


def describe(proxy: Proxy) -> dict[str, Any]:
    """What the proxy did, for people: calls, sources, upstream-slower calls, divergences."""
    calls = proxy.history.calls
    slower = [c for c in calls if c.upstream_slower]
    out: dict[str, Any] = {
        "calls": len(calls),
        "upstream_slower": len(slower),
        "errors": sum(1 for c in calls if c.status >= 400 or c.error),
    }
    if proxy.recording is not None:
        out["replay_policy"] = proxy.recording.policy_name
        out["divergences"] = [d.describe() for d in proxy.recording.divergences]
    return out
