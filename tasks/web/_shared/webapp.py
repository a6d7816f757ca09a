"""A tiny web-app kit on the Python standard library, shared by the bundled web tasks.

Copied into each web task's workspace as `app/webapp.py` (task.yaml `include`). The apps
are single-user: their whole state is one JSON file (`app/state.json`), written atomically
after every change, which is what the tasks' checkers read. Run an app with
`python3 app/server.py --port PORT --bind ADDRESS`.
"""

import argparse
import html
import json
import os
import re
import threading
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
    """One request: method, path, query and form fields (first value; `all` for lists)."""

    def __init__(self, method, target, body):
        parts = urlsplit(target)
        self.method = method
        self.path = parts.path
        self.query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.fields = parse_qs(body, keep_blank_values=True)

    def form(self, name, default=""):
        values = self.fields.get(name)
        return values[0].strip() if values else default

    def all(self, name):
        return self.fields.get(name, [])


class Response:
    def __init__(self, body="", status=200, location=None):
        self.body = body
        self.status = status
        self.location = location


def redirect(location):
    """303 See Other (post/redirect/get)."""
    return Response(status=303, location=location)


STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 52em; }
nav a { margin-right: 1em; } label { display: block; margin: .5em 0; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .3em .6em; }
.error { color: #a00; } .notice { color: #060; }
"""


def page(title, body, nav=None, errors=(), notice=None):
    """A whole HTML page: title, optional nav links, error list, notice and body."""
    links = "".join(f'<a href="{esc(href)}">{esc(text)}</a>' for text, href in nav or [])
    navigation = f'<nav aria-label="Main">{links}</nav>' if links else ""
    problems = "".join(f"<li>{esc(e)}</li>" for e in errors)
    alert = f'<ul class="error" role="alert">{problems}</ul>' if problems else ""
    status = f'<p class="notice" role="status">{esc(notice)}</p>' if notice else ""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f"<style>{STYLE}</style></head><body>{navigation}<main>{alert}{status}{body}</main>"
        "</body></html>"
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


def serve(routes, store):
    """Parse --port/--bind and serve `routes`: (method, path regex, handler(request, match))."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--bind", default="127.0.0.1")
    options = parser.parse_args()
    compiled = [(method, re.compile(pattern + "$"), handler) for method, pattern, handler in routes]

    class Handler(BaseHTTPRequestHandler):
        def handle_request(self, method):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8") if length else ""
            request = Request(method, self.path, body)
            response = Response("<h1>Not found</h1>", 404)
            for route_method, pattern, handler in compiled:
                match = pattern.match(request.path)
                if route_method == method and match:
                    with store.lock:
                        response = handler(request, match)
                    break
            data = response.body.encode("utf-8")
            self.send_response(response.status)
            if response.location:
                self.send_header("Location", response.location)
            self.send_header("Content-Type", "text/html; charset=utf-8")
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
