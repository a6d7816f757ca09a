"""`looplab.cache`: values derived from the package alone, kept under its digest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from looplab import cache
from looplab.cache import cache_dir, derived, package_digest, tree_digest


def _same(value: Any) -> Any:
    """`derived`'s load: the stored JSON value itself."""
    return value


@pytest.fixture
def cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """LOOPLAB_CACHE_DIR set to an empty folder; its `derived/` folder returned."""
    monkeypatch.setenv("LOOPLAB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "derived"


def test_cache_dir_follows_the_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """LOOPLAB_CACHE_DIR wins, then XDG_CACHE_HOME/looplab, then ~/.cache/looplab."""
    monkeypatch.delenv("LOOPLAB_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "looplab"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "looplab"
    monkeypatch.setenv("LOOPLAB_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


def test_a_value_is_computed_once_then_read(cached: Path) -> None:
    """The first call computes and writes one file named by the digest; later calls read it
    (the function is not called again) and give the same value."""
    calls: list[int] = []

    def compute() -> dict[str, object]:
        calls.append(1)
        return {"a": [1.5, float("inf")], "b": "x"}

    first = derived("thing", compute, _same)
    second = derived("thing", compute, _same)
    assert first == second == {"a": [1.5, float("inf")], "b": "x"}
    assert len(calls) == 1
    assert [p.name for p in cached.iterdir()] == [f"thing-{package_digest()}.json"]


def test_another_package_digest_computes_afresh(
    cached: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A changed package (another digest) never reads the old value."""
    derived("thing", lambda: "old", _same)
    monkeypatch.setattr(cache, "package_digest", lambda: "0123456789abcdef")
    assert derived("thing", lambda: "new", _same) == "new"
    assert derived("thing", lambda: "unused", _same) == "new"


def test_a_damaged_file_is_computed_again(cached: Path) -> None:
    """A cut-off file is not an error: the value is computed and the file mended."""
    derived("thing", lambda: {"n": 1}, _same)
    (file,) = cached.iterdir()
    file.write_text('{"n": ', encoding="utf-8")
    assert derived("thing", lambda: {"n": 2}, _same) == {"n": 2}
    assert derived("thing", lambda: {"n": 3}, _same) == {"n": 2}


def test_a_stored_value_of_another_shape_is_computed_again(cached: Path) -> None:
    """A stored value the caller's `load` refuses (a KeyError here) is computed again and
    the file replaced."""
    derived("thing", lambda: {"old": 1}, _same)
    assert derived("thing", lambda: {"new": 2}, lambda v: v["new"]) == 2
    assert derived("thing", lambda: {"new": 3}, lambda v: v["new"]) == 2


def test_an_unwritable_cache_still_answers(cached: Path) -> None:
    """A cache folder that cannot be made (its path is a file): the value is returned,
    nothing is raised, and the file is untouched."""
    cached.parent.write_text("not a folder", encoding="utf-8")
    assert derived("thing", lambda: [1, 2], _same) == [1, 2]
    assert cached.parent.read_text(encoding="utf-8") == "not a folder"


def test_a_failed_write_leaves_no_temporary_file(
    cached: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails half-way (here: the rename) leaves no file behind, and the value
    is still returned."""

    def refuse(source: str, target: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(cache.os, "replace", refuse)
    assert derived("thing", lambda: {"k": "v"}, _same) == {"k": "v"}
    assert list(cached.iterdir()) == []


def test_the_digest_covers_every_file_but_bytecode(tmp_path: Path) -> None:
    """One changed byte or a renamed file changes the digest; bytecode does not."""
    (tmp_path / "pkg" / "data").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "data" / "w.yaml").write_text("rate: 80\n")
    before = tree_digest(tmp_path / "pkg")
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert tree_digest(tmp_path / "pkg") == before
    (tmp_path / "pkg" / "data" / "w.yaml").write_text("rate: 81\n")
    changed = tree_digest(tmp_path / "pkg")
    assert changed != before
    (tmp_path / "pkg" / "data" / "w.yaml").rename(tmp_path / "pkg" / "data" / "v.yaml")
    assert tree_digest(tmp_path / "pkg") not in {before, changed}
