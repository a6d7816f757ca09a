"""The maps match the house: every package is named where a newcomer looks, and every
package README names the modules that exist and no module that is gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "looplab"
NAMED = re.compile(r"`([^`\s]+)`")


def _packages() -> list[str]:
    """The top-level packages of looplab (folders with an `__init__.py`)."""
    return sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())


def _readmes() -> list[Path]:
    return sorted(PACKAGE.rglob("README.md"))


def _section(text: str, heading: str) -> str:
    """The text of the `## heading` section of a markdown file."""
    start = text.index(f"## {heading}")
    following = text.find("\n## ", start + 3)
    return text[start : following if following >= 0 else len(text)]


def test_every_package_is_on_both_maps_and_has_its_tests_folder() -> None:
    """Each package is named in looplab/README.md and the top README's layout, and has
    tests/<package>/."""
    tour = (PACKAGE / "README.md").read_text()
    layout = _section((ROOT / "README.md").read_text(), "Layout and installs")
    missing = [
        f"{name}: {where}"
        for name in _packages()
        for where, text in (("looplab/README.md", tour), ("README.md layout", layout))
        if f"{name}/" not in text
    ]
    missing += [
        f"{name}: tests/{name}/" for name in _packages() if not (ROOT / "tests" / name).is_dir()
    ]
    assert missing == []


def _named_modules(readme: Path) -> list[str]:
    """Backticked module names in a README (`x.py`, `a/b.py`)."""
    found = []
    for token in NAMED.findall(readme.read_text()):
        token = token.rstrip(",.;:")
        if token.endswith(".py") and not any(c in token for c in "<>*{}()=$|"):
            found.append(token)
    return found


def _tree_files() -> set[str]:
    """Every .py file of the package, the tests and the experiments, as posix paths."""
    files = set()
    for top in ("looplab", "tests", "experiments", "scripts", "docs"):
        files |= {p.relative_to(ROOT).as_posix() for p in (ROOT / top).rglob("*.py")}
    return files


def test_no_readme_names_a_module_that_is_gone() -> None:
    """Every module (`x.py`, `sub/x.py`) a package README names exists: beside the README,
    or as the end of a path in the package, the tests or the experiments."""
    files = _tree_files()
    gone = []
    for readme in _readmes():
        for token in _named_modules(readme):
            if (readme.parent / token).exists() or (ROOT / token).exists():
                continue
            if not any(f == token or f.endswith("/" + token) for f in files):
                gone.append(f"{readme.relative_to(ROOT)}: {token}")
    assert gone == []


def test_every_module_is_named_in_its_package_readme() -> None:
    """Each module and subfolder of a package with a README is named in that README (or,
    for a subpackage with its own README, there)."""
    unnamed = []
    for readme in _readmes():
        folder = readme.parent
        text = readme.read_text()
        for item in sorted(folder.iterdir()):
            if item.name.startswith(("__", ".")) or item.name == "README.md":
                continue
            if item.is_dir():
                if not any(item.rglob("*.py")) or f"{item.name}/" in text:
                    continue
                unnamed.append(f"{readme.relative_to(ROOT)}: {item.name}/")
            elif item.suffix == ".py" and item.name not in text:
                unnamed.append(f"{readme.relative_to(ROOT)}: {item.name}")
    assert unnamed == []


def test_no_package_init_only_points_elsewhere() -> None:
    """A package's docstring says what the package is, not only "See README.md"."""
    bare = [
        str(init.relative_to(ROOT))
        for init in PACKAGE.rglob("__init__.py")
        if init.read_text().strip().strip('"').strip() == "See README.md in this folder."
    ]
    assert bare == []
