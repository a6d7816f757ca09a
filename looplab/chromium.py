"""The one Chromium finder and its launch flags (report screenshots, the browser tools,
the test suite's browser tier).

Which binary, first that exists: an explicit path (a config's `executable`), then
`$LOOPLAB_CHROMIUM`, then Playwright's own browser when it is installed (`playwright
install chromium`), then `chromium` on PATH, then `/usr/bin/chromium` (Debian's package,
which `scripts/ensure-chromium.sh` installs).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from looplab.errors import PrerequisiteError

__all__ = [
    "CHROMIUM_ARGS",
    "CHROMIUM_ENV",
    "INSTALL_FIX",
    "SYSTEM_CHROMIUM",
    "chromium_candidates",
    "find_chromium",
    "require_chromium",
]

CHROMIUM_ENV = "LOOPLAB_CHROMIUM"
"""Environment variable naming the Chromium binary to use."""

SYSTEM_CHROMIUM = "/usr/bin/chromium"
"""Where Debian's `chromium` package puts the browser."""

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-sync",
]
"""Flags for a quiet, offline, reproducible headless Chromium that runs as root and in
containers: no setuid sandbox, no background or update traffic, no GPU, no QUIC, no
first-run or sync."""

INSTALL_FIX = f"apt-get install -y chromium (or set {CHROMIUM_ENV}=/path/to/chrome)"
"""What to do when no Chromium is found."""


def chromium_candidates(
    explicit: str | None = None, playwright_path: str | None = None
) -> list[str]:
    """The places looked at, in order (see the module docstring); empty ones left out."""
    if explicit:
        return [explicit]
    candidates = [
        os.environ.get(CHROMIUM_ENV) or "",
        playwright_path or "",
        shutil.which("chromium") or "",
        SYSTEM_CHROMIUM,
    ]
    return [c for c in candidates if c]


def find_chromium(explicit: str | None = None, playwright_path: str | None = None) -> str | None:
    """The first existing Chromium binary of `chromium_candidates`, or None.

    Args:
        explicit: a path that, when given, is the only candidate.
        playwright_path: Playwright's own browser (`playwright.chromium.executable_path`).
    """
    return next(
        (c for c in chromium_candidates(explicit, playwright_path) if Path(c).is_file()), None
    )


def require_chromium(explicit: str | None = None, playwright_path: str | None = None) -> str:
    """`find_chromium`, or a `PrerequisiteError` naming where it looked and the fix."""
    found = find_chromium(explicit, playwright_path)
    if found is None:
        looked = ", ".join(chromium_candidates(explicit, playwright_path))
        raise PrerequisiteError(f"no Chromium found (looked at {looked})", fix=INSTALL_FIX)
    return found
