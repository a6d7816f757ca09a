"""Optional parts of looplab and the extras that install them (pyproject.toml).

The base install serves the simulator and re-times, sweeps, imports and reports traces;
running agents needs more. A command that needs a missing extra fails early with
`PrerequisiteError` naming the `pip install` that fixes it (`require`), and the CLI turns
a late `ModuleNotFoundError` of one of these modules into the same message
(`extra_for_module`).
"""

from __future__ import annotations

import importlib.util

from looplab.errors import PrerequisiteError

__all__ = ["EXTRAS", "extra_for_module", "missing_extra_error", "require"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "agents": ("langgraph", "playwright", "pytest"),
    "docker": ("docker",),
    "store": ("duckdb",),
    "ray": ("ray",),
    "collect": ("opentelemetry",),
}
"""Extra name -> the top-level modules it installs."""


def extra_for_module(module: str | None) -> str | None:
    """The extra that installs `module` (e.g. `duckdb` -> `store`), or None."""
    top = (module or "").split(".")[0]
    for extra, modules in EXTRAS.items():
        if top in modules:
            return extra
    return None


def missing_extra_error(extra: str, purpose: str, module: str) -> PrerequisiteError:
    """The error saying `purpose` needs `extra` (whose `module` is not installed)."""
    return PrerequisiteError(
        f"{purpose} needs the looplab[{extra}] extra ({module} is not installed)",
        fix=f"pip install 'looplab[{extra}]'  (or 'looplab[all]' for everything)",
    )


def require(extra: str, purpose: str) -> None:
    """Check that every module of `extra` is importable.

    Args:
        extra: a key of `EXTRAS`.
        purpose: what needs it, for the message (e.g. "looplab run").

    Raises:
        PrerequisiteError: a module of the extra is missing; says what to install.
    """
    for module in EXTRAS[extra]:
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:  # a finder that refuses the name counts as missing
            found = False
        if not found:
            raise missing_extra_error(extra, purpose, module)
