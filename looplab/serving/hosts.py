"""The Host header check (DNS rebinding guard): which Host headers name a server.

A page of another site can make a browser send requests to 127.0.0.1 under the page's own
name (DNS rebinding: the name resolves to the site, then to 127.0.0.1), and read the
answers as same-origin. A server that only answers requests whose Host header is its bound
address and port, parsed strictly (`split_host`), is out of that page's reach.

`HostGuard` is the ASGI middleware; the port it checks is the one the connection reached
(the ASGI scope's `server`), so the app can be built before its socket is bound. The
dashboard and `collect` are guarded; `serve` and the proxy are not (an agent in a
container reaches them under the bridge's or `host.docker.internal`'s name).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["HostGuard", "host_check", "split_host"]


def split_host(header: str) -> tuple[str | None, int | None]:
    """A Host header as (name, port): `name`, `name:port`, `[v6]`, `[v6]:port` or a bare
    IPv6 address; (None, None) for anything else (`127.0.0.1:1@evil.com`, `a:b`, `[::1]x`)."""
    text = header.strip().lower()
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            return None, None
        name, rest = text[1:close], text[close + 1 :]
    elif text.count(":") == 1:
        name, rest = text.split(":")[0], text[text.index(":") :]
    else:
        name, rest = text, ""
    if rest and not (rest.startswith(":") and rest[1:].isdigit() and len(rest) <= 6):
        return None, None
    if not name or any(c in name for c in "@/\\?#%"):
        return None, None
    return name, int(rest[1:]) if rest else None


def host_check(host: str, port: int) -> Callable[[str], bool]:
    """Whether a Host header names the bound address: on loopback, `localhost` or a
    loopback address; on a wildcard bind, an IP literal or this machine's name; else the
    bound name itself. A port, when given, must be the bound one (digits only)."""
    names = {host.lower().strip("[]")}
    loopback = _is_loopback(host)
    if loopback:
        names |= {"localhost", "127.0.0.1", "::1"}
    wildcard = host in ("0.0.0.0", "::", "")
    if wildcard:
        names |= {"localhost", socket.gethostname().lower(), socket.getfqdn().lower()}

    def allowed(header: str) -> bool:
        name, given = split_host(header)
        if name is None or (given is not None and given != port):
            return False  # not host[:port], or another port than the one bound
        if name in names:
            return True
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return False
        return wildcard or (loopback and address.is_loopback)

    return allowed


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _plain_refusal(header: str) -> Response:
    return PlainTextResponse(
        f"Host {header!r} is not this server's address (DNS rebinding guard).", 400
    )


class HostGuard:
    """ASGI middleware: a request (HTTP or WebSocket) whose Host header does not name the
    bound address (`host_check`) is refused: HTTP with `refusal(header)` (default a plain
    400), a WebSocket handshake with 403; others reach `app`.

    Args:
        app: the guarded app.
        host: the interface the server binds (as given to it: `0.0.0.0` is a wildcard).
        refusal: the HTTP answer to a foreign Host header.
    """

    def __init__(
        self,
        app: ASGIApp,
        host: str,
        refusal: Callable[[str], Response] = _plain_refusal,
    ) -> None:
        self.app = app
        self.host = host
        self.refusal = refusal
        self._checks: dict[int, Callable[[str], bool]] = {}

    def allowed(self, header: str, port: int) -> bool:
        """Whether `header` names this server reached on `port`."""
        check = self._checks.get(port)
        if check is None:
            check = self._checks[port] = host_check(self.host, port)
        return check(header)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        header = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
        server = scope.get("server")
        if server is not None and len(server) > 1 and self.allowed(header, int(server[1])):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            await self.refusal(header)(scope, receive, send)
