"""Secret scrubbing: API keys and credentials never reach a trace or a log.

`Scrubber.scrub` walks any JSON-like value and replaces, in every string:
- the values of environment variables whose names look like credentials
  (`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`) that are set at scrub time;
- every key this process has read for use (`remember_secret`: each `api_key_env` /
  `--api-key-env` value, whatever its variable is called), also ones read after the
  scrubber was made;
- common key shapes: `sk-...` (OpenAI-style), `csk-...` (Cerebras), `gsk_...` (Groq),
  `Bearer <token>`, `Authorization: <value>`, `api_key=...` / `"api_key": "..."`;
- credentials in URLs: the user-info part of `scheme://user:password@host` (or of
  `scheme://token@host`) becomes `scheme://[REDACTED]@host`;
- any extra regular expressions the caller configures;
and drops mapping entries whose key is itself a credential name (`authorization`,
`api_key`, `x-api-key`, ...), keeping the key with a `[REDACTED]` value.

`credential_values` is the one rule for what a request carries as a credential: the value
of every header whose name looks like one (`Authorization`, `x-api-key`,
`x-goog-api-key`, `api-key`, `Cookie`, any name with auth / token / key / secret / cookie /
password / session in it), its token after a scheme (`Bearer`), each cookie's value, and
the credential-named query values of a URL (`?key=`, `?api_key=`, `?token=`,
`looplab.urls.SECRET_QUERY`). Callers scrub those values wherever they reappear.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

from looplab.urls import SECRET_QUERY

__all__ = ["REDACTED", "Scrubber", "credential_values", "remember_secret"]

REDACTED = "[REDACTED]"

_BUILTIN_PATTERNS = [
    r"\b(?:sk|csk|gsk|xai|pk)[-_][A-Za-z0-9_\-]{12,}",
    r"\b[Bb]earer\s+[A-Za-z0-9._~+/=\-]{8,}",
    r"(?<=[Aa]uthorization: )[^\s\"']+",
    r"(?<=api[_-]key=)[^\s&\"']+",
    r"(?<=://)[^/?#\s\"'<>]+(?=@[^/\s@\"'<>]*(?:[/\s\"'<>?#]|$))",
]
_SECRET_ENV = re.compile(r"(?i)(api_?key|token|secret|password)")
_SECRET_KEYS = {"authorization", "api_key", "apikey", "x-api-key", "api-key", "password", "secret"}


_SECRET_HEADER = re.compile(r"(?i)(auth|token|key|secret|cookie|password|session|signature)")
_NOT_SECRET_HEADER = re.compile(r"(?i)^sec-websocket-|^keep-alive$")
_MIN_SECRET = 8
"""Shorter values are placeholders (`EMPTY`, `test`), not keys."""


def credential_values(headers: Mapping[str, str], url: str | None = None) -> tuple[str, ...]:
    """The credential values a request carries (module docstring), 8 characters or more."""
    found: list[str] = []
    for name, value in headers.items():
        if not _SECRET_HEADER.search(name) or _NOT_SECRET_HEADER.search(name):
            continue
        found += [value, value.strip().rpartition(" ")[2]]
        if "cookie" in name.lower():
            found += [part.partition("=")[2].strip() for part in value.split(";")]
    if url:
        try:
            query = urllib.parse.urlsplit(url).query
        except ValueError:
            query = ""
        for key, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
            if SECRET_QUERY.match(key):
                found += [value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)]
    return tuple(dict.fromkeys(v for v in found if len(v) >= _MIN_SECRET))


_in_use: set[str] = set()
"""Keys this process read for use (`remember_secret`)."""


def remember_secret(value: str) -> None:
    """Have every `Scrubber` redact `value` from now on (call it where a key is read).

    Values under 8 characters are placeholders (`EMPTY`, `test`), not keys: redacting them
    would garble every trace that happens to contain the word."""
    if len(value) >= _MIN_SECRET:
        _in_use.add(value)


class Scrubber:
    """Replaces secrets in strings, recursively (see the module docstring).

    Args:
        patterns: extra regular expressions whose matches are redacted.
        environ: the environment to take credential values from (default: `os.environ`).
    """

    def __init__(self, patterns: Iterable[str] = (), environ: dict[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self._env = [v for k, v in env.items() if _SECRET_ENV.search(k) and len(v) >= 8]
        self._extra = list(patterns)
        self._known = -1
        self._pattern = self._compile()

    def _compile(self) -> re.Pattern[str]:
        """One pattern of every secret value (longest first) and every shape."""
        self._known = len(_in_use)
        values = sorted({*self._env, *_in_use}, key=len, reverse=True)
        sources = [re.escape(v) for v in values] + _BUILTIN_PATTERNS + self._extra
        return re.compile("|".join(f"(?:{s})" for s in sources))

    def text(self, value: str) -> str:
        """`value` with every secret replaced by `[REDACTED]`."""
        if self._known != len(_in_use):  # a key was read since: redact it too
            self._pattern = self._compile()
        return self._pattern.sub(REDACTED, value)

    def spans(self, value: str) -> list[tuple[int, int]]:
        """Where `text` would redact in `value`: (start, stop) of each match, in order."""
        if self._known != len(_in_use):
            self._pattern = self._compile()
        return [
            match.span() for match in self._pattern.finditer(value) if match.end() > match.start()
        ]

    def scrub(self, value: Any) -> Any:
        """A copy of a JSON-like value with secrets redacted everywhere."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                key: REDACTED
                if isinstance(key, str) and key.lower() in _SECRET_KEYS and value[key]
                else self.scrub(value[key])
                for key in value
            }
        if isinstance(value, list | tuple):
            return [self.scrub(item) for item in value]
        return value
