"""`looplab dashboard`: a read-only local web server over a directory of experiments.

Routes (GET only; anything else is refused by http.server with 501):

| path                        | page                                                    |
|-----------------------------|---------------------------------------------------------|
| `/`                         | experiments under the root with headline numbers, and a |
|                             | form to compare any two experiments or runs             |
| `/report/<relative path>`   | the report of an experiment directory or one trace      |
| `/compare?a=<rel>&b=<rel>`  | one report over both, groups labelled by input          |

Every path is resolved and must stay inside the root (`..`, absolute paths and symlinks
out of it are refused with 403). Reports are built on request and cached until a trace
file of the input changes. The server binds 127.0.0.1 only.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Literal
from urllib.parse import parse_qs, quote, unquote, urlsplit

from looplab.errors import LooplabError
from looplab.report.build import build_report
from looplab.report.svg import fmt_s
from looplab.report.views import ReportModel
from looplab.traces.inputs import find_trace_files

__all__ = ["DashboardServer", "PathRefused", "discover_experiments", "resolve_inside"]

_log = logging.getLogger(__name__)
_MAX_DEPTH = 4
_MAX_RUN_OPTIONS = 200


class PathRefused(Exception):
    """A requested path is outside the root (403) or not a report input (404)."""

    def __init__(self, status: HTTPStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def resolve_inside(root: Path, relative: str) -> Path:
    """`root / relative`, resolved, if it stays inside `root` and is a report input.

    Raises:
        PathRefused: 403 for paths that leave the root, 404 for ones that are not an
            experiment directory, a directory of traces or a trace file.
    """
    base = root.resolve()
    if "\x00" in relative or relative.startswith(("/", "\\")) or ":" in relative[:3]:
        raise PathRefused(HTTPStatus.FORBIDDEN, "absolute paths are refused")
    candidate = (base / relative).resolve()
    if not candidate.is_relative_to(base):
        raise PathRefused(HTTPStatus.FORBIDDEN, "outside the dashboard root")
    if candidate.is_file() and candidate.suffix == ".jsonl":
        return candidate
    if candidate.is_dir():
        try:
            find_trace_files(candidate)
        except LooplabError:
            raise PathRefused(HTTPStatus.NOT_FOUND, "no traces there") from None
        return candidate
    raise PathRefused(HTTPStatus.NOT_FOUND, "no such experiment or trace")


def discover_experiments(root: Path) -> list[Path]:
    """Directories under `root` (itself included) holding `traces/*.jsonl` or `*.jsonl`."""
    found: list[Path] = []

    def walk(directory: Path, depth: int) -> None:
        if any(directory.glob("*.jsonl")) or any((directory / "traces").glob("*.jsonl")):
            found.append(directory)
            return
        if depth >= _MAX_DEPTH:
            return
        for child in sorted(directory.iterdir()):
            if child.is_dir() and not child.name.startswith(".") and not child.is_symlink():
                walk(child, depth + 1)

    if root.is_dir():
        walk(root.resolve(), 0)
    return found


@dataclass
class _Cached:
    signature: tuple[int, float]
    html: str
    model: ReportModel


class _Reports:
    """Built reports, rebuilt when their inputs' trace files change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[tuple[tuple[Path, ...], str], _Cached] = {}

    def get(
        self, inputs: tuple[Path, ...], group_by: Literal["profile", "input"], title: str | None
    ) -> _Cached:
        signature = _signature(inputs)
        key = (inputs, group_by)
        with self._lock:
            cached = self._cache.get(key)
            if cached is None or cached.signature != signature:
                html, model = build_report(list(inputs), title=title, group_by=group_by)
                cached = _Cached(signature, html, model)
                self._cache[key] = cached
            return cached


def _signature(inputs: tuple[Path, ...]) -> tuple[int, float]:
    files = [f for path in inputs for f in find_trace_files(path)]
    return len(files), max((f.stat().st_mtime for f in files), default=0.0)


class DashboardServer:
    """The dashboard on 127.0.0.1, served from a background thread.

    Args:
        root: the directory whose experiments are listed (nothing outside it is served).
        port: TCP port (0: any free port; see `url`).
        host: interface to bind (loopback by default; the dashboard has no authentication).
    """

    def __init__(self, root: Path, port: int = 0, host: str = "127.0.0.1") -> None:
        self.root = root.resolve()
        self.reports = _Reports()
        handler = type("Handler", (_Handler,), {"dashboard": self})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL, e.g. `http://127.0.0.1:8760/`."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/"

    def start(self) -> None:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted."""
        self.httpd.serve_forever()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join()
            self._thread = None
        self.httpd.server_close()

    def __enter__(self) -> DashboardServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def relative(self, path: Path) -> str:
        """`path` relative to the root, as used in URLs (`.` for the root itself)."""
        return path.relative_to(self.root).as_posix() or "."

    def index_page(self) -> str:
        """The list of experiments with their headline numbers and the compare form."""
        rows: list[str] = []
        options: list[str] = []
        for experiment in discover_experiments(self.root):
            rel = self.relative(experiment)
            try:
                model = self.reports.get((experiment,), "profile", None).model
            except LooplabError as exc:
                rows.append(f"<tr><td>{escape(rel)}</td><td colspan=4>{escape(str(exc))}</td></tr>")
                continue
            groups = "<br>".join(
                f'<i class="dot" style="--c:{g.color}"></i>{escape(g.label)}: '
                f"{fmt_s(g.median_task_s)} median, {g.runs} runs, {g.speedup:.2f}x"
                for g in model.groups
            )
            rows.append(
                f'<tr><td><a class="report" href="/report/{quote(rel)}">{escape(rel)}</a></td>'
                f"<td>{model.runs}</td><td>{groups}</td><td>{escape(model.sentence)}</td></tr>"
            )
            runs = [
                f'<option value="{escape(self.relative(f))}">{escape(f.stem)}</option>'
                for f in find_trace_files(experiment)[:_MAX_RUN_OPTIONS]
            ]
            options.append(
                f'<option value="{escape(rel)}">experiment: {escape(rel)}</option>'
                f'<optgroup label="runs of {escape(rel)}">{"".join(runs)}</optgroup>'
            )
        table = (
            "<table><thead><tr><th>experiment</th><th>runs</th><th>profiles (median task time, "
            "speedup over the slowest)</th><th>headline</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
            if rows
            else "<p>No experiments (directories with traces/*.jsonl) under this root.</p>"
        )
        choices = "".join(options)
        form = (
            '<form action="/compare" method="get"><h2>Compare side by side</h2>'
            f'<label>A <select name="a" id="pick-a">{choices}</select></label> '
            f'<label>B <select name="b" id="pick-b">{choices}</select></label> '
            '<button type="submit" id="compare">compare</button></form>'
            if options
            else ""
        )
        return _page(
            "looplab dashboard",
            f"<h1>looplab dashboard</h1><p class='sub'>{escape(str(self.root))} (read-only)</p>"
            f"{table}{form}",
        )


class _Handler(BaseHTTPRequestHandler):
    dashboard: DashboardServer
    server_version = "looplab-dashboard"

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        path = unquote(url.path)
        try:
            if path == "/":
                self._send(HTTPStatus.OK, self.dashboard.index_page())
            elif path.startswith("/report/"):
                target = resolve_inside(self.dashboard.root, path.removeprefix("/report/"))
                self._send(
                    HTTPStatus.OK, self.dashboard.reports.get((target,), "profile", None).html
                )
            elif path == "/compare":
                query = parse_qs(url.query)
                picks = [query.get(k, [""])[0] for k in ("a", "b")]
                if not all(picks):
                    raise PathRefused(HTTPStatus.BAD_REQUEST, "compare needs a= and b=")
                inputs = tuple(resolve_inside(self.dashboard.root, p) for p in picks)
                title = f"{picks[0]} vs {picks[1]}"
                self._send(HTTPStatus.OK, self.dashboard.reports.get(inputs, "input", title).html)
            else:
                raise PathRefused(HTTPStatus.NOT_FOUND, "no such page")
        except PathRefused as exc:
            self._send(exc.status, _page("refused", f"<h1>{exc.status.value}</h1><p>{exc}</p>"))
        except LooplabError as exc:
            self._send(
                HTTPStatus.UNPROCESSABLE_ENTITY, _page("error", f"<p>{escape(str(exc))}</p>")
            )

    def _send(self, status: HTTPStatus, body: str) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        _log.debug("dashboard " + format, *args)


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        f"<title>{escape(title)}"
        f"</title><style>{_CSS}</style></head><body>{body}</body></html>"
    )


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px 32px;color:#1d1d1f}
table{border-collapse:collapse}th,td{padding:6px 10px;border-bottom:1px solid #eee;
text-align:left;vertical-align:top}th{background:#f3f3f1}
.dot{display:inline-block;width:10px;height:10px;border-radius:50%;background:var(--c);
margin-right:6px}.sub{color:#666}form{margin-top:24px}select{max-width:420px}
"""
