"""One name per idea: no two public modules define a public class or function of one name.

A name shared by two definitions makes a reader (and a grep, and an import completion) guess
which is meant: `Divergence` was both a proxy request's departure from its recording and a
live replay's changed tool result. Counted: top-level `class`/`def` whose name does not
start with `_`, in modules whose own name does not start with `_` (a private module, such
as the sandbox's `_inside_files.py` that runs inside the sandbox where looplab cannot be
imported, is no public name). A re-export (`from x import Name`, `__all__`) defines
nothing, so it is never a duplicate.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "looplab"

ALLOWED: dict[str, str] = {}
"""Name -> why its sharing is deliberate. Empty: no sharing is; an entry needs a reason a
reader accepts (several modules implementing one protocol function by convention, say), and
it fails here once the name is no longer shared."""


def _public_definitions(package: Path = PACKAGE) -> dict[str, list[str]]:
    """Public name -> the modules (paths from `package`'s parent) defining it at their top
    level."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(package.rglob("*.py")):
        if path.stem.startswith("_") and path.stem != "__init__":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(
                node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
            ) and not node.name.startswith("_"):
                found[node.name].append(path.relative_to(package.parent).as_posix())
    return found


def test_public_names_are_unique() -> None:
    """No public class or function name is defined in two public looplab modules."""
    shared = {
        name: paths
        for name, paths in _public_definitions().items()
        if len(paths) > 1 and name not in ALLOWED
    }
    assert not shared, (
        f"one name, several ideas: rename one side (or argue it in ALLOWED): {shared}"
    )


def test_allowed_names_are_still_shared() -> None:
    """Every `ALLOWED` entry is still shared (the list only holds live exceptions)."""
    definitions = _public_definitions()
    stale = [name for name in ALLOWED if len(definitions.get(name, [])) < 2]
    assert not stale, stale


def test_the_check_sees_a_shared_name(tmp_path: Path) -> None:
    """The scan finds a name two public modules define, and skips re-exports, private
    names and private modules (so an empty result means something)."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("class Thing: ...\ndef _helper(): ...\n")
    (package / "sub" / "b.py").write_text("def Thing(): ...\ndef _helper(): ...\n")
    (package / "sub" / "__init__.py").write_text("from pkg.a import Thing\n")
    (package / "_private.py").write_text("class Thing: ...\n")
    definitions = _public_definitions(package)
    assert definitions == {"Thing": ["pkg/a.py", "pkg/sub/b.py"]}
