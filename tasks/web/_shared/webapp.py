"""A tiny web-app kit on the Python standard library, shared by the bundled web tasks.

Copied into each web task's workspace as `app/webapp.py` (task.yaml `include`). The apps
are single-user: their whole state is one JSON file (`app/state.json`), written atomically
after every change, which is what the tasks' checkers read. Run an app with
`python3 app/server.py --port PORT --bind ADDRESS [--latency-ms MS]`.

Data endpoints (routes marked `slow`) answer after a configurable delay, like a real
backend's query time: `--latency-ms`, else the environment variable `APP_LATENCY_MS`, else
the app's default (`serve(..., latency_ms=...)`). The delay is spent outside the state lock,
so concurrent requests overlap as they would on a real server.
"""

import argparse
import html
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
STATE_FILE = os.path.join(HERE, "state.json")
esc = html.escape


class Store:
    """The app's state: a dict loaded from state.json (or the seed) and saved on change."""

    def __init__(self, seed):
        self.lock = threading.RLock()
        if os.path.exists(STATE_FILE):
            with open(STATE_FILE, encoding="utf-8") as handle:
                self.data = json.load(handle)
        else:
            self.data = json.loads(json.dumps(seed))

    def save(self):
        temporary = STATE_FILE + ".tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(self.data, handle, indent=1, sort_keys=True)
        os.replace(temporary, STATE_FILE)


class Request:
    """One request: method, path, query (first values; `query_lists` all of them) and form
    fields (first value; `all` for lists)."""

    def __init__(self, method, target, body):
        parts = urlsplit(target)
        self.method = method
        self.path = parts.path
        self.query_lists = parse_qs(parts.query)
        self.query = {k: v[0] for k, v in self.query_lists.items()}
        self.fields = parse_qs(body, keep_blank_values=True)

    def form(self, name, default=""):
        values = self.fields.get(name)
        return values[0].strip() if values else default

    def all(self, name):
        return self.fields.get(name, [])


class Response:
    def __init__(self, body="", status=200, location=None, content_type="text/html"):
        self.body = body
        self.status = status
        self.location = location
        self.content_type = content_type


def json_response(data, status=200):
    """A JSON body (for pages that fetch their data and build the DOM in JavaScript)."""
    return Response(json.dumps(data), status, content_type="application/json")


def redirect(location):
    """303 See Other (post/redirect/get)."""
    return Response(status=303, location=location)


STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 52em; }
nav a { margin-right: 1em; } label { display: block; margin: .5em 0; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .3em .6em; }
.error { color: #a00; } .notice { color: #060; }
"""


def page(title, body, nav=None, errors=(), notice=None, header="", footer=""):
    """A whole HTML page: title, optional nav links, error list, notice and body; `header`
    and `footer` are extra HTML around `main` (a site's menus and footer links)."""
    links = "".join(f'<a href="{esc(href)}">{esc(text)}</a>' for text, href in nav or [])
    navigation = f'<nav aria-label="Main">{links}</nav>' if links else ""
    problems = "".join(f"<li>{esc(e)}</li>" for e in errors)
    alert = f'<ul class="error" role="alert">{problems}</ul>' if problems else ""
    status = f'<p class="notice" role="status">{esc(notice)}</p>' if notice else ""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f"<style>{STYLE}</style></head><body>{header}{navigation}<main>{alert}{status}{body}"
        f"</main>{footer}</body></html>"
    )


def field(label, name, value="", kind="text", **attributes):
    """A labelled input."""
    extra = "".join(f' {k.replace("_", "-")}="{esc(str(v))}"' for k, v in attributes.items())
    return (
        f'<label>{esc(label)} <input type="{kind}" name="{name}" value="{esc(str(value))}"'
        f"{extra}></label>"
    )


def select(label, name, options, chosen=""):
    """A labelled drop-down; options are (value, text) pairs."""
    items = "".join(
        f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>{esc(t)}</option>'
        for v, t in options
    )
    return f'<label>{esc(label)} <select name="{name}">{items}</select></label>'


def nested_links(items, label=None):
    """Nested lists of links, as a site's menus are: items are (text, href, children)."""
    entries = "".join(
        f'<li><a href="{esc(href)}">{esc(text)}</a>{nested_links(children) if children else ""}'
        "</li>"
        for text, href, children in items
    )
    return f'<nav aria-label="{esc(label)}"><ul>{entries}</ul></nav>' if label else f"<ul>{entries}</ul>"


def serve(routes, store, latency_ms=0):
    """Parse --port/--bind/--latency-ms and serve `routes`.

    Args:
        routes: (method, path regex, handler(request, match)), or with a fourth item
            `slow`: True for a data endpoint, answered after the latency.
        store: the app's Store.
        latency_ms: the app's default latency of its data endpoints.
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--bind", default="127.0.0.1")
    default = int(os.environ.get("APP_LATENCY_MS") or latency_ms)
    parser.add_argument("--latency-ms", type=int, default=default)
    options = parser.parse_args()
    delay_s = max(0, options.latency_ms) / 1000
    compiled = [
        (route[0], re.compile(route[1] + "$"), route[2], len(route) > 3 and route[3])
        for route in routes
    ]

    class Handler(BaseHTTPRequestHandler):
        def handle_request(self, method):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8") if length else ""
            request = Request(method, self.path, body)
            response = Response("<h1>Not found</h1>", 404)
            for route_method, pattern, handler, slow in compiled:
                match = pattern.match(request.path)
                if route_method == method and match:
                    if slow and delay_s:
                        time.sleep(delay_s)
                    with store.lock:
                        response = handler(request, match)
                    break
            data = response.body.encode("utf-8")
            self.send_response(response.status)
            if response.location:
                self.send_header("Location", response.location)
            self.send_header("Content-Type", f"{response.content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.handle_request("GET")

        def do_POST(self):
            self.handle_request("POST")

        def log_message(self, format, *args):
            pass

    server = ThreadingHTTPServer((options.bind, options.port), Handler)
    server.daemon_threads = True
    server.serve_forever()
