"""A bench failure's reason, never empty: the exception's type and message, and the fix
where one is known (too many open files: raise `ulimit -n`)."""

from __future__ import annotations

import errno

__all__ = ["CLOSED_EARLY", "failure_reason"]

_FD_FIX = (
    "raise the open-file limit (e.g. `ulimit -n 65536`): each stream holds one socket in "
    "the client and one in the server"
)
CLOSED_EARLY = (
    "the server closed the connection before answering (no status line); a server out of "
    f"file descriptors does this: {_FD_FIX}"
)
"""The reason when a reply ends before its status line."""


def failure_reason(exc: BaseException) -> str:
    """`Type: message` of `exc` (its repr when the message is empty), plus the fix for a
    process out of file descriptors (EMFILE, ENFILE)."""
    message = str(exc) or repr(exc)
    reason = f"{type(exc).__name__}: {message}"
    if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
        reason += f"; fix: {_FD_FIX}"
    return reason
