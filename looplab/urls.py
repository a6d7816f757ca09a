"""API root URLs: checked once where they come in, and never shown with a secret in them.

`url_problem` is the one check of every base URL a person gives (`--upstream`, a real
backend's `base_url`, a wrapped agent's `upstream`): an http(s) URL with a host and no
credentials. A password in a URL is refused, not used: clients send it as HTTP Basic
auth *instead of* the API key (every call then fails with 401), and a URL is printed,
served (`/health`) and written (configs, traces). Keys go in an environment variable
named by `api_key_env` / `--api-key-env`.

`join_path` appends an endpoint to a root whose query (`?key=...`) stays after the path.
`public_url` / `public_text` are what may be shown: user-info removed and query values
with credential names (`key`, `api_key`, `token`, ...) redacted.
"""

from __future__ import annotations

import re
import urllib.parse

__all__ = ["SECRET_QUERY", "api_root", "join_path", "public_text", "public_url", "url_problem"]

_USERINFO = re.compile(r"(?<=://)[^/?#\s@'\"]*@")
SECRET_QUERY = re.compile(r"(?i)^(.*key|.*token|.*secret|password|sig|signature)$")
"""Query parameter names whose values are credentials (`?key=`, `?api_key=`, `?token=`)."""


def public_url(url: str) -> str:
    """`url` without user-info and with credential-named query values redacted."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return _USERINFO.sub("", url)
    host = parts.netloc.rpartition("@")[2]
    query = urllib.parse.urlencode(
        [
            (name, "REDACTED" if SECRET_QUERY.match(name) else value)
            for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        ]
    )
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, query, parts.fragment))


def join_path(root: str, suffix: str) -> str:
    """`root`'s URL with `suffix` appended to its path, its query kept after it
    (`http://h/v1?key=K` + `/chat/completions` -> `http://h/v1/chat/completions?key=K`)."""
    parts = urllib.parse.urlsplit(root)
    path = parts.path.rstrip("/") + suffix
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))


def public_text(text: str) -> str:
    """`text` with the user-info of every URL in it removed."""
    return _USERINFO.sub("", text)


def url_problem(value: str) -> str | None:
    """Why `value` is not a usable http(s) API root (a sentence), or None when it is.

    The sentence shows the URL only as `public_url` would.
    """
    shown = public_url(value)
    if any(c.isspace() for c in value):
        return f"{shown!r} is not a URL (it contains whitespace)"
    try:
        parts = urllib.parse.urlsplit(value)
        parts.port  # noqa: B018  # raises ValueError for a port that is not a number in range
    except ValueError as exc:
        return f"{shown!r} is not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return f"{shown!r} is not an http(s) URL (e.g. http://127.0.0.1:8750/v1)"
    if not parts.hostname:
        return f"{shown!r} has no host (e.g. http://127.0.0.1:8750/v1)"
    if parts.username is not None or parts.password is not None:
        return (
            f"credentials in the URL {shown!r} are refused: clients would send them as "
            "HTTP Basic auth instead of the API key, and a URL is printed and stored; put "
            "the key in an environment variable and name it with api_key_env / --api-key-env"
        )
    return None


def api_root(value: str | None) -> str | None:
    """A pydantic field validator: `value` when it is None or a usable http(s) API root
    with a host and no credentials.

    Raises:
        ValueError: why it is not (`url_problem`'s sentence).
    """
    problem = url_problem(value) if value is not None else None
    if problem:
        raise ValueError(problem)
    return value
