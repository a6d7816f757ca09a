"""The dashboard's Host check (DNS rebinding guard): which Host headers name it.

A page of another site can make a browser send requests to 127.0.0.1 under its own name
(DNS rebinding); the dashboard answers only requests whose Host header is its bound
address and port, parsed strictly (`split_host`).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

__all__ = ["host_check", "split_host"]


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
