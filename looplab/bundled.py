"""Where the data shipped with looplab lives: bundled tasks, experiment configs, the corpus.

In a checkout (or an editable install) they are the repository's top-level `tasks/`,
`experiments/configs/` and `corpus/` folders; in an installed wheel they are copied under
`looplab/_bundled/` (pyproject's `force-include`). Callers never guess paths themselves.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["bundled_configs_dir", "bundled_corpus_dir", "bundled_tasks_dir"]

_PACKAGE = Path(__file__).resolve().parent


def _first_existing(*candidates: Path) -> Path:
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return candidates[-1]


def bundled_tasks_dir() -> Path:
    """`LOOPLAB_TASKS_DIR` when set, else the shipped `tasks/` folder."""
    override = os.environ.get("LOOPLAB_TASKS_DIR")
    if override:
        return Path(override)
    return _first_existing(_PACKAGE / "_bundled" / "tasks", _PACKAGE.parent / "tasks")


def bundled_configs_dir() -> Path:
    """The shipped experiment configs (`experiments/configs/` in a checkout)."""
    return _first_existing(
        _PACKAGE / "_bundled" / "configs", _PACKAGE.parent / "experiments" / "configs"
    )


def bundled_corpus_dir() -> Path:
    """The shipped corpus of real runs (`corpus/` in a checkout)."""
    return _first_existing(_PACKAGE / "_bundled" / "corpus", _PACKAGE.parent / "corpus")
