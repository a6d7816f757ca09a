"""The tests mirror the package: a test file under tests/<package>/ (or
tests/<package>/<subpackage>/) imports that package (subpackage), so a reader finds the
tests of `looplab/x/` in `tests/x/`; the other folders of tests/ are named kinds of test."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "looplab"
TESTS = ROOT / "tests"

KINDS = {
    "conformance": "one suite per interface, run over every implementation",
    "golden": "golden traces of whole runs, with the command that regenerates them",
    "invariants": "properties that hold across packages (the views agree)",
    "maps": "the house's maps: READMEs, this tree",
    "reliability": "abuse, faults and limits across packages (its own mark, conftest `_NEEDS`)",
    "fixtures": "data, no tests",
}
"""Folders of tests/ that are a kind of test, not a package's: their files may test any."""

ALLOWED = {
    "agents/test_deliberation.py": "the agent's planner and reflection calls, observed "
    "end to end (run, trace, store, report): agents/ has no piece to call on its own",
    "experiments/test_sweep_untimed.py": "runs `looplab sweep` (experiments/commands.py) "
    "as its users do, in a process",
    "backends/simulator/test_openai_format.py": "checks the simulator through the "
    "`openai_client` fixture of tests/backends/conftest.py only",
    "backends/policies/test_budget.py": "`policies/budget.py`'s rule, checked through the "
    "simulator's API as an agent calls it",
    "backends/proxy/test_wrap.py": "runs `looplab wrap` (backends/proxy/wrap.py) in a "
    "process, as its users do",
    "report/test_byo_volatile.py": "one of the README's bring-your-own-agent recipe tests: "
    "shares tests/report/byo/ and its `byo_upstream` fixture; runs `looplab wrap` in processes",
}
"""Test files that do not import their folder's package, each with why it sits there (its
docstring says the same). The list only shrinks: an entry that imports its package, or
is gone, fails `test_the_allowed_list_only_holds_what_it_must`."""


def _packages(under: Path) -> set[str]:
    return {p.name for p in under.iterdir() if (p / "__init__.py").exists()}


def _imports(path: Path) -> set[str]:
    """The looplab modules a file imports (lazy imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name.startswith("looplab.")}


def _owner(relative: Path) -> str:
    """`backends/simulator/test_x.py` -> `looplab.backends.simulator`; a folder that is no
    subpackage of its package (tests/report/byo/) counts as the package itself."""
    parts = relative.parts[:-1]
    owner = ["looplab", parts[0]]
    if len(parts) > 1 and parts[1] in _packages(PACKAGE / parts[0]):
        owner.append(parts[1])
    return ".".join(owner)


def _tests_its_owner(path: Path, owner: str) -> bool:
    """Imports `owner` (or a module in it); a CLI test may instead run `python -m looplab`
    (the CLI tested as its users call it)."""
    if any(name == owner or name.startswith(owner + ".") for name in _imports(path)):
        return True
    return owner == "looplab.cli" and '"-m", "looplab"' in path.read_text(encoding="utf-8")


def _test_files() -> list[tuple[str, Path]]:
    return [
        (path.relative_to(TESTS).as_posix(), path)
        for path in sorted(TESTS.glob("*/**/test_*.py"))
        if path.relative_to(TESTS).parts[0] not in KINDS
    ]


def test_every_tests_folder_is_a_package_or_a_kind() -> None:
    """Each folder of tests/ is a looplab package's or one of the named kinds."""
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert sorted(folders - _packages(PACKAGE) - set(KINDS)) == []


def test_every_test_file_imports_the_package_it_sits_under() -> None:
    """A file in tests/<pkg>/ imports a `looplab.<pkg>` module (in tests/<pkg>/<sub>/, a
    `looplab.<pkg>.<sub>` one), or is on the argued `ALLOWED` list."""
    strays = [
        f"{name}: imports nothing of {_owner(Path(name))}"
        for name, path in _test_files()
        if name not in ALLOWED and not _tests_its_owner(path, _owner(Path(name)))
    ]
    assert strays == []


def test_the_allowed_list_only_holds_what_it_must() -> None:
    """Every `ALLOWED` file exists, still imports nothing of its package, and its
    docstring argues why it sits there."""
    files = dict(_test_files())
    stale = [
        name
        for name in ALLOWED
        if name not in files
        or _tests_its_owner(files[name], _owner(Path(name)))
        or "sits in" not in (ast.get_docstring(ast.parse(files[name].read_text())) or "")
    ]
    assert stale == []
