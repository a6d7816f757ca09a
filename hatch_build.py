"""Build hook: copy the bundled data (tasks, experiment configs, corpus) into the regular wheel.

Only the regular wheel gets the copies (under `looplab/_bundled/`); an editable install
reads them from the checkout (see `looplab/bundled.py`), so editing a task needs no
reinstall and the editable install exposes nothing but the `looplab` package.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

BUNDLED = {
    "tasks": "looplab/_bundled/tasks",
    "experiments/configs": "looplab/_bundled/configs",
    "corpus": "looplab/_bundled/corpus",
}


class BundledDataHook(BuildHookInterface):  # type: ignore[type-arg]  # hatchling is untyped
    """Adds `BUNDLED` to the standard wheel's forced inclusions."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Add the bundled folders when building a regular (not editable) wheel."""
        if version == "standard":
            build_data["force_include"].update(BUNDLED)
