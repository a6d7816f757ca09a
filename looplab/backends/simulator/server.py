"""The simulator's HTTP face: an OpenAI-compatible Starlette app.

Endpoints:

| method | path                                   | what                                         |
|--------|----------------------------------------|----------------------------------------------|
| POST   | `/v1/chat/completions`                 | streaming (SSE) and non-streaming completions |
| POST   | `/v1/responses`                        | the Responses API (`responses_stream.py`)     |
| WS     | `/v1/responses`                        | the same over a WebSocket (`responses_ws.py`) |
| GET    | `/v1/models`, `/v1/models/{id}`        | the served model ids (`looplab-<policy>`)     |
| GET    | `/health`                              | liveness, profile, active/queued/completed    |
| GET    | `/v1/looplab/profile`                  | the full latency profile in force             |
| GET    | `/v1/looplab/requests/{id}/timing`     | intended vs actual release times of a request |

Every completion response carries `x-request-id` and `x-looplab-request-id` (the id the
timing endpoint takes). Errors use OpenAI's JSON shape; no input crashes the server, and
no client mistake (bad JSON, JSON nested too deeply, a field of the wrong type or range)
is a 500: those are 400s naming the field.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from looplab.backends.simulator.model import Simulator
from looplab.backends.simulator.protocol import ApiError
from looplab.backends.simulator.responses_stream import responses_endpoint
from looplab.backends.simulator.responses_ws import responses_websocket
from looplab.serving.guard import arrival

__all__ = ["create_app"]


def create_app(simulator: Simulator) -> Starlette:
    """Build the ASGI app serving `simulator`."""
    endpoints = _Endpoints(simulator)
    routes = [
        Route("/v1/chat/completions", endpoints.chat_completions, methods=["POST"]),
        Route("/v1/responses", endpoints.responses, methods=["POST"]),
        WebSocketRoute("/v1/responses", endpoints.responses_websocket),
        Route("/v1/models", endpoints.models, methods=["GET"]),
        Route("/v1/models/{model_id:path}", endpoints.model, methods=["GET"]),
        Route("/health", endpoints.health, methods=["GET"]),
        Route("/v1/looplab/profile", endpoints.profile, methods=["GET"]),
        Route("/v1/looplab/requests/{request_id}/timing", endpoints.timing, methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={
            404: _not_found,
            405: _wrong_method,
            500: _server_error,
        },
    )


class _Endpoints:
    """The app's request handlers, one method per route, over one simulator."""

    def __init__(self, simulator: Simulator) -> None:
        self.simulator = simulator

    async def chat_completions(self, request: Request) -> Response:
        """`POST /v1/chat/completions`: SSE or JSON; client mistakes are 400s."""
        simulator = self.simulator
        try:
            body = await request.body()
            prepared = simulator.prepare(body, arrived=arrival(request.scope))
        except ApiError as error:
            return _error_response(error)
        except RecursionError:  # JSON nested deeper than the parser's recursion limit
            return _error_response(
                ApiError(400, "The JSON body is nested too deeply.", code="invalid_json")
            )
        headers = {
            "x-request-id": prepared.request_id,
            "x-looplab-request-id": prepared.request_id,
            "x-looplab-tokenizer": simulator.tokenizer.name,
            "openai-processing-ms": "0",
        }
        if prepared.request.stream:
            headers["cache-control"] = "no-cache"
            return StreamingResponse(
                simulator.stream(prepared), media_type="text/event-stream", headers=headers
            )
        return JSONResponse(await simulator.complete(prepared), headers=headers)

    async def responses(self, request: Request) -> Response:
        """`POST /v1/responses` (`responses_stream.py`)."""
        return await responses_endpoint(self.simulator, request)

    async def responses_websocket(self, websocket: WebSocket) -> None:
        """`/v1/responses` upgraded to a WebSocket (`responses_ws.py`)."""
        await responses_websocket(self.simulator, websocket)

    async def models(self, request: Request) -> Response:
        """`GET /v1/models`: the served model ids."""
        return JSONResponse(
            {"object": "list", "data": [_model(m) for m in self.simulator.policies]}
        )

    async def model(self, request: Request) -> Response:
        """`GET /v1/models/{id}`: one model, or 404 `model_not_found`."""
        model_id = request.path_params["model_id"]
        if model_id not in self.simulator.policies:
            return _error_response(
                ApiError(
                    404,
                    f"The model `{model_id}` does not exist.",
                    param="model",
                    code="model_not_found",
                )
            )
        return JSONResponse(_model(model_id))

    async def health(self, request: Request) -> Response:
        """`GET /health`: liveness, profile, active/queued/completed."""
        return JSONResponse(self.simulator.health())

    async def profile(self, request: Request) -> Response:
        """`GET /v1/looplab/profile`: the latency profile in force."""
        return JSONResponse(self.simulator.profile.model_dump(mode="json", by_alias=True))

    async def timing(self, request: Request) -> Response:
        """`GET /v1/looplab/requests/{id}/timing`: a request's release times, or 404."""
        request_id = request.path_params["request_id"]
        record = self.simulator.timings.get(request_id)
        if record is None:
            return _error_response(
                ApiError(
                    404,
                    f"No timing for request {request_id!r}: unknown, still running, or "
                    "older than the last 10,000 requests.",
                    param="request_id",
                    code="not_found",
                )
            )
        return JSONResponse(record)


async def _not_found(request: Request, exc: Exception) -> Response:
    return _error_response(
        ApiError(404, f"Unknown path {request.url.path}", type="invalid_request_error")
    )


async def _wrong_method(request: Request, exc: Exception) -> Response:
    return _error_response(
        ApiError(405, f"Method {request.method} not allowed on {request.url.path}")
    )


async def _server_error(request: Request, exc: Exception) -> Response:
    return _error_response(ApiError(500, f"Internal simulator error: {exc}", type="server_error"))


def _model(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": 0, "owned_by": "looplab"}


def _error_response(error: ApiError) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status, headers=error.headers)
