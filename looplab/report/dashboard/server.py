"""`looplab dashboard`: a read-only local web app over a directory of experiments
(Starlette, served by `looplab.serving.AppServer` like every looplab server).

Routes (GET and HEAD only; any other method is answered 405):

| path                              | page                                                |
|-----------------------------------|-----------------------------------------------------|
| `/`                               | experiments (by name), headline, tasks, compare form |
| `/report/<relative path>`         | the report of an experiment directory or one trace  |
| `/task?name=<task>[&filters]`     | every run of a task under the root, and per agent   |
|                                   | the matrix of step-aligned diffs (B - A time)       |
| `/runs[?model=&agent=&profile=&outcome=&min_s=&max_s=&q=..]` | every run, filtered |
| `/run/<relative trace path>`      | one run: timeline, where the time goes, transcript  |
| `/diff?a=<trace>&b=<trace>`       | the step-aligned diff of two runs                   |
| `/compare?a=<rel>&b=<rel>[..&h=]` | 2-8 sides per task, A / B / delta against `base=<i>` |
| `/api/state[?path=<rel>]`         | JSON for live refresh (trace signature, running)    |

Safety: every path is resolved and must stay inside the root (403 otherwise); the Host
header must name the bound address (`looplab.serving.hosts.HostGuard`: a page of another
site cannot reach the dashboard by DNS rebinding: 400); connections are bounded by the
serving guard (at most `MAX_CONNECTIONS` at once, 503 beyond; a connection that sends no
whole request within `IDLE_S` of opening or of its last response is closed; request heads
over 64 KiB are answered 431); responses forbid framing and any network request but to
the dashboard itself. Reports are built on request and cached until a trace file changes;
an experiment that cannot be read is listed with its error.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from looplab.errors import ConfigError, LooplabError
from looplab.layout import ExperimentDir
from looplab.report.build import build_model_for
from looplab.report.dashboard import pages
from looplab.report.dashboard.compare_page import compare_page, read_specs
from looplab.report.dashboard.experiments import PathRefused, Reports, resolve_inside
from looplab.report.dashboard.list_pages import runs_page, task_page
from looplab.report.data.records import RunRecord, record_from_trace
from looplab.report.render.page import render_page
from looplab.report.render.success import deadline_form, deadline_s
from looplab.report.sides import split_spec
from looplab.serving.appserver import AppServer
from looplab.serving.hosts import HostGuard
from looplab.traces.io import Trace, read_trace

__all__ = [
    "IDLE_S",
    "MAX_CONNECTIONS",
    "DashboardServer",
    "PathRefused",
    "create_dashboard_app",
]

MAX_CONNECTIONS = 256
"""Connections served at once; more are answered 503 (200 concurrent readers are served)."""
IDLE_S = 10.0
"""A connection that has not sent a complete request head this long after it opened (or
after its last response) is closed."""
HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (
        b"content-security-policy",
        b"default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        b"script-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
    ),
]
"""Sent with every response."""


class _SecurityHeaders:
    """ASGI middleware: `HEADERS` added to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        await self.app(scope, receive, wrapped if scope["type"] == "http" else send)


def _foreign_host(header: str) -> Response:
    """The answer to a Host header that is not the dashboard's address."""
    body = pages.message_page(
        400, f"Host {header!r} is not this dashboard's address (DNS rebinding guard)."
    )
    return HTMLResponse(body, status_code=400)


def _guarded(handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
    """`handler` with refusals and input errors answered as pages (never a traceback)."""

    def endpoint(request: Request) -> Response:
        try:
            return handler(request)
        except PathRefused as exc:
            return HTMLResponse(pages.message_page(exc.status, str(exc)), exc.status)
        except (LooplabError, OSError, ValueError) as exc:
            return HTMLResponse(pages.message_page(422, str(exc)), 422)

    return endpoint


class _Routes:
    """The route handlers over one root (see the module's table)."""

    def __init__(self, root: Path) -> None:
        self.reports = Reports(root)
        self.compared: dict[tuple[Any, ...], str] = {}

    def trace(self, relative: str) -> Trace:
        return read_trace(resolve_inside(self.reports.root, relative, file_only=True))

    def record(self, relative: str) -> RunRecord:
        trace = self.trace(relative)
        if not trace.complete:
            raise ConfigError(
                f"run {trace.header.run_id} ({relative}) is still in progress or was cut off: "
                "only ended runs can be diffed"
            )
        return record_from_trace(trace, (trace.path or Path(relative)).parent.name)

    def index(self, request: Request) -> Response:
        return HTMLResponse(pages.index_page(self.reports))

    def report(self, request: Request) -> Response:
        relative = request.path_params["path"]
        target = resolve_inside(self.reports.root, relative)
        deadline = request.query_params.get("deadline", "").strip()
        if deadline:  # the user's deadline: built for this request, never cached
            model, records = build_model_for([target], deadline_s=deadline_s(deadline))
            links = {r.run_id: pages.run_url(self.reports, r) for r in records}
            form = deadline_form(deadline)
            return HTMLResponse(render_page(model, run_pages=links, extra=form))
        if not target.is_dir():
            model, records = build_model_for([target])
            links = {r.run_id: pages.run_url(self.reports, r) for r in records}
            return HTMLResponse(render_page(model, run_pages=links))
        experiment = self.reports.experiment(target)
        state = pages.live_state(experiment)
        if experiment.model is None and experiment.error is None:
            return HTMLResponse(pages.waiting_page(experiment, state=state))
        if experiment.model is None:
            raise ConfigError(experiment.error or "no report")
        if experiment.html is None:
            links = {r.run_id: pages.run_url(self.reports, r) for r in experiment.records}
            extra = pages.live(state) + deadline_form("")
            experiment.html = render_page(experiment.model, run_pages=links, extra=extra)
        return HTMLResponse(experiment.html)

    def task(self, request: Request) -> Response:
        return HTMLResponse(task_page(self.reports, dict(request.query_params)))

    def runs(self, request: Request) -> Response:
        return HTMLResponse(runs_page(self.reports, dict(request.query_params)))

    def run(self, request: Request) -> Response:
        relative = request.path_params["path"]
        trace = self.trace(relative)
        if not trace.complete:
            folder = Path(relative).parent
            folder = folder.parent if folder == ExperimentDir(folder.parent).traces else folder
            target = resolve_inside(self.reports.root, folder.as_posix())
            state = pages.live_state(self.reports.experiment(target))
            return HTMLResponse(pages.in_progress_page(trace, state=state))
        return HTMLResponse(pages.run_page(self.reports, self.record(relative)))

    def diff(self, request: Request) -> Response:
        a, b = (request.query_params.get(k, "") for k in ("a", "b"))
        if not a or not b:
            raise PathRefused(400, "a diff needs two runs: /diff?a=<trace>&b=<trace>")
        first, second = self.record(a), self.record(b)
        if first.run_id == second.run_id:
            raise ConfigError("pick two different runs to diff", field="b")
        if first.task != second.task:
            raise ConfigError(
                f"a step diff compares runs of one task: A ran {first.task}, B ran {second.task}",
                field="b",
            )
        return HTMLResponse(pages.diff_page(self.reports, first, second))

    def compare(self, request: Request) -> Response:
        specs, base = read_specs(dict(request.query_params), self.reports.root)
        dirs = [resolve_inside(self.reports.root, split_spec(s)[0]) for s in specs]
        key = (*specs, base, *(self.reports.experiment(p).signature for p in dirs if p.is_dir()))
        if key not in self.compared:
            if len(self.compared) >= 16:
                self.compared.pop(next(iter(self.compared)))
            self.compared[key] = compare_page(self.reports, specs, base)
        return HTMLResponse(self.compared[key])

    def state(self, request: Request) -> Response:
        relative = request.query_params.get("path")
        target = resolve_inside(self.reports.root, relative) if relative else None
        return JSONResponse(self.reports.state(target if target and target.is_dir() else None))


def create_dashboard_app(root: Path, host: str) -> ASGIApp:
    """The dashboard over `root`, answering requests whose Host header names `host` (the
    bound interface) at the port they reached (`HostGuard`)."""
    routes = _Routes(root)
    table = [
        Route("/", _guarded(routes.index)),
        Route("/report/{path:path}", _guarded(routes.report)),
        Route("/task", _guarded(routes.task)),
        Route("/runs", _guarded(routes.runs)),
        Route("/run/{path:path}", _guarded(routes.run)),
        Route("/diff", _guarded(routes.diff)),
        Route("/compare", _guarded(routes.compare)),
        Route("/api/state", _guarded(routes.state)),
    ]
    return _SecurityHeaders(HostGuard(Starlette(routes=table), host, refusal=_foreign_host))


class DashboardServer(AppServer):
    """The dashboard on `host:port`, bound at construction (so `url` is known before it
    serves); started, stopped and drained as every `AppServer`.

    Args:
        root: the directory whose experiments are listed (nothing outside it is served).
        port: TCP port (0: any free port; see `url`).
        host: interface to bind (loopback by default; the dashboard has no authentication).
        idle_s: close a connection that sends no whole request this long (`IDLE_S`).
        max_connections: connections served at once (`MAX_CONNECTIONS`).

    Raises:
        ConfigError: the address cannot be bound (names --port / --host).
    """

    def __init__(
        self,
        root: Path,
        port: int = 0,
        host: str = "127.0.0.1",
        *,
        idle_s: float = IDLE_S,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.root = root.resolve()
        super().__init__(
            create_dashboard_app(self.root, host),
            host=host,
            port=port,
            name="looplab-dashboard",
            read_timeout_s=idle_s,
            max_connections=max_connections,
        )
        self.bind()
