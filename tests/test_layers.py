"""The documented layer order of docs/design.md: no module imports from a higher layer."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "looplab"

# Bottom to top. A module may import its own layer or any lower one. `commands.py`
# modules (each package's CLI commands), `cli.py` and `__main__.py` are the wiring layer
# at the top: the only places that may reach across every package.
LAYERS: list[set[str]] = [
    {
        "errors",
        "cache",
        "config_errors",
        "config",
        "clock",
        "stats",
        "bundled",
        "extras",
        "sandbox_contract",
        "chromium",
        "tasks",
        "urls",
        "layout",
        "console",
        "distributions",
        "serving",
    },
    {"latency"},
    {"traces"},
    {"workloads"},
    {"backends"},
    {"analysis"},
    {"sandboxes", "tools"},
    {"agents"},
    {"claims"},
    {"report"},
    {"experiments"},
    {"bench"},
]
WIRING = {"cli", "__main__"}


def _unit(module: str) -> str:
    """`looplab.backends.simulator.pacing` -> `backends`; `looplab.errors` -> `errors`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "looplab"


def _layer(unit: str) -> int | None:
    for index, members in enumerate(LAYERS):
        if unit in members:
            return index
    return None


def _imports(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return [name for name in found if name == "looplab" or name.startswith("looplab.")]


def test_every_unit_has_a_layer() -> None:
    """Every top-level module and subpackage of `looplab` is placed in the layer list."""
    units = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()
    }
    unplaced = sorted(u for u in units - {"__init__"} - WIRING if _layer(u) is None)
    assert unplaced == []


def test_no_upward_import() -> None:
    """No module imports a unit of a higher layer (commands modules excepted)."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        unit = _unit(module)
        if unit in WIRING or path.name == "commands.py" or unit in {"__init__", "looplab"}:
            continue
        own = _layer(unit)
        assert own is not None, module
        for imported in _imports(path):
            target = _layer(_unit(imported))
            if target is not None and target > own:
                offenders.append(f"{module} imports {imported}")
    assert offenders == []


COMMANDS_REACHING_UP = {
    "looplab.traces.commands": {
        "looplab.analysis.pathsplit",
        "looplab.analysis.replay",
        "looplab.workloads.model",
        "looplab.workloads.sample",
        "looplab.workloads.shape",
    },
    "looplab.traces.collect.commands": {"looplab.workloads.metrics", "looplab.workloads.model"},
    "looplab.workloads.commands": {"looplab.analysis.fit"},
    "looplab.backends.proxy.commands": {"looplab.experiments.guards.containment"},
}
"""The upward imports of commands modules, each argued in docs/design.md ("Why commands
modules are wiring")."""


def test_commands_reach_up_only_where_design_md_argues_it() -> None:
    """A commands module imports a higher layer only as `COMMANDS_REACHING_UP` lists, and
    docs/design.md names every such pair (a new one must be argued there first)."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("commands.py"):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        own = _layer(_unit(module))
        for imported in _imports(path):
            target = _layer(_unit(imported))
            if own is not None and target is not None and target > own:
                found.setdefault(module, set()).add(imported)
    assert found == COMMANDS_REACHING_UP
    design = (PACKAGE.parent / "docs" / "design.md").read_text(encoding="utf-8")
    for module, targets in COMMANDS_REACHING_UP.items():
        home = module.removeprefix("looplab.").replace(".", "/") + ".py"
        assert f"`{home}`" in design, home
        for target in targets:
            assert target.removeprefix("looplab.").split(".")[-1] in design, target


def _module_graph() -> dict[str, set[str]]:
    """Module -> the looplab modules it imports (lazy and type-only imports included)."""
    modules = {
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
        for p in PACKAGE.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
            elif isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def test_no_import_circles() -> None:
    """No module reaches itself through imports, not even through a lazy or a type-only
    import (a circle hidden that way is still a circle)."""
    graph = _module_graph()
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_nothing_imports_the_entry_point() -> None:
    """`looplab.cli` is the entry point only: no other module imports it (the commands
    and everything else use `looplab.console` for the CLI dialect and consoles)."""
    offenders = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] not in ("cli", "__main__.py")
        for name in _imports(path)
        if name == "looplab.cli" or name.startswith("looplab.cli.")
    ]
    assert offenders == []


def test_tools_need_no_backend() -> None:
    """`sandboxes/` and `tools/` import only the core and `looplab.latency` (the tokenizer
    of synthetic tools): the layer list would let them reach backends, analysis, traces
    and workloads, and design.md says they do not."""
    below = set().union(*LAYERS[:2])
    offenders = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for unit in ("sandboxes", "tools")
        for path in (PACKAGE / unit).rglob("*.py")
        for name in _imports(path)
        if _unit(name) not in below | {"sandboxes", "tools"}
    ]
    assert offenders == []
