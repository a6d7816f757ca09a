"""The report's stylesheet and scripts (`looplab/report/assets/`), read once and inlined
into every page: the report file stays one self-contained document, and the wheel ships
the files as package data (hatch includes everything under `looplab/`)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

__all__ = ["SCRIPTS", "asset", "inline_scripts"]

SCRIPTS = ("report.js", "timeline.js")
"""The interactive layer, in load order (`timeline.js` starts it)."""


@cache
def asset(name: str) -> str:
    """The text of `assets/<name>`."""
    return files("looplab.report").joinpath("assets", name).read_text(encoding="utf-8")


def inline_scripts(names: tuple[str, ...] = SCRIPTS) -> str:
    """`<script>` elements holding the named assets (none may contain `</script`)."""
    texts = [asset(n) for n in names]
    if any("</script" in t.lower() for t in texts):
        raise ValueError("a report script contains '</script' and would end its element")
    return "".join(f"<script>{t}</script>" for t in texts)
