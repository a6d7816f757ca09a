"""The one exception tree of looplab.

Split by audience (style.md rule 11):

```
LooplabError                 base of everything looplab raises on purpose
├── ConfigError              bad input from a person: file, field, allowed values
├── PrerequisiteError        something is not installed or not running: says the fix
├── BackendError             an inference backend failed (carries request id, status)
├── SandboxError             a sandbox cannot do its job (carries sandbox id)
├── TraceError               a trace file is unreadable or of an unknown format
└── DiskFullError            the disk a command writes to is full (names the path)
```

`ConfigError` and `PrerequisiteError` are for people: the CLI prints their message and
exits with code 2, without a traceback. The others are for programs: they carry ids so a
failure can be traced back to one request, sandbox or run.

A command that exits non-zero inside a sandbox, or a tool that reports failure, is a
*result* (an `ExecResult`, a tool message), never an exception.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

__all__ = [
    "BackendError",
    "ConfigError",
    "DiskFullError",
    "LooplabError",
    "PrerequisiteError",
    "SandboxError",
    "TraceError",
]


class LooplabError(Exception):
    """Base class of every exception looplab raises on purpose."""


class ConfigError(LooplabError):
    """Invalid configuration or command-line input.

    The message names where the problem is (file, line, field or flag), what was given
    and what is allowed, so a person can fix it without reading code; with `given`, the
    allowed value closest to it is offered ("did you mean ...?").
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        field: str | None = None,
        allowed: Sequence[str] | None = None,
        given: str | None = None,
    ) -> None:
        self.source = source
        self.field = field
        self.allowed = list(allowed) if allowed else []
        self.message = message
        self.given = given
        parts = []
        if source:
            parts.append(source)
        if field:
            parts.append(f"field '{field}'")
        prefix = ": ".join(parts)
        text = f"{prefix}: {message}" if prefix else message
        close = difflib.get_close_matches(given, self.allowed, n=1) if given else []
        if close:
            text += f"; did you mean {close[0]!r}?"
        if self.allowed:
            text += f" (allowed: {', '.join(self.allowed)})"
        super().__init__(text)


class PrerequisiteError(LooplabError):
    """Something looplab needs is missing or not running; `fix` says how to get it."""

    def __init__(self, message: str, *, fix: str) -> None:
        self.fix = fix
        super().__init__(f"{message}\n  fix: {fix}")


class BackendError(LooplabError):
    """An inference backend failed to answer a request.

    Attributes:
        request_id: the backend's or looplab's id of the failing request, if known.
        status: the HTTP status, if the failure was an HTTP error response.
    """

    def __init__(
        self, message: str, *, request_id: str | None = None, status: int | None = None
    ) -> None:
        self.request_id = request_id
        self.status = status
        where = f" [request {request_id}]" if request_id else ""
        super().__init__(f"{message}{where}")


class SandboxError(LooplabError):
    """A sandbox cannot do its job (start, exec transport, file I/O); carries its id."""

    def __init__(self, message: str, *, sandbox_id: str | None = None) -> None:
        self.sandbox_id = sandbox_id
        where = f" [sandbox {sandbox_id}]" if sandbox_id else ""
        super().__init__(f"{message}{where}")


class TraceError(LooplabError):
    """A trace file cannot be read: missing, truncated header, or unknown format."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class DiskFullError(LooplabError):
    """The disk under `path` is full (ENOSPC): said once, with where and how to resume."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"{path}: no space left on device; free space there and rerun the same command "
            "(finished cells are kept, the cut-off ones run again)"
        )
