"""One home for claim verdicts: `looplab/claims/verdicts.py` alone defines the verdict rule,
`TOO_FEW` and the verdict words; every other module imports them."""

from __future__ import annotations

import ast
from pathlib import Path

from looplab.claims.verdicts import Verdict

PACKAGE = Path(__file__).resolve().parents[2] / "looplab"
HOME = PACKAGE / "claims" / "verdicts.py"
WORDS = {str(v) for v in Verdict}


def _second_homes(path: Path, *, claims: bool) -> list[str]:
    """What in one module makes it a second home: a `TOO_FEW` assignment anywhere; in a
    claims module (`claims`) also a `verdict`/`_verdict` function, a verdict word spelt as
    a literal or its own use of `against_band` (the rule's words come from `Verdict`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if claims and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name in ("verdict", "_verdict"):
                found.append(f"def {node.name} at {where}")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "TOO_FEW" for t in targets):
                found.append(f"TOO_FEW = at {where}")
        elif claims and isinstance(node, ast.Constant) and node.value in WORDS:
            found.append(f"{node.value!r} at {where}")
        elif claims and isinstance(node, ast.alias) and node.name == "against_band":
            found.append(f"against_band at {where}")
    return found


def test_one_home_for_the_verdict_vocabulary() -> None:
    """No module of looplab but verdicts.py assigns a `TOO_FEW`; no other claims module
    defines a `verdict`/`_verdict` function (the old second homes: claims/check.py and the
    panel's rows.py), spells a verdict word or maps `against_band` itself."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != HOME:
            found += _second_homes(path, claims=PACKAGE / "claims" in path.parents)
    assert found == []


def test_the_scan_finds_a_second_home(tmp_path: Path) -> None:
    """The scan is not blind: the old check.py's own verdict, TOO_FEW, word and
    `against_band` import are each found."""
    module = tmp_path / "old_check.py"
    module.write_text(
        "from looplab.stats.order import against_band\n"
        'TOO_FEW = "n too small"\n\n'
        "def verdict() -> str:\n"
        '    return "supported"\n',
        encoding="utf-8",
    )
    found = _second_homes(module, claims=True)
    assert sorted(f.split(" at ")[0] for f in found) == [
        "'supported'",
        "TOO_FEW =",
        "against_band",
        "def verdict",
    ]
    assert _second_homes(HOME, claims=True) != []  # the home itself has them
