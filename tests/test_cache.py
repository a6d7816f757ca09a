"""`looplab.cache`: values derived from the package and named inputs, kept under their
digests, believed only when bounded, authentic (HMAC) and finite (issue 47, finding 5)."""

from __future__ import annotations

import hashlib
import hmac
import math
import os
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
        return {"a": [1.5, -2], "b": "x"}

    first = derived("thing", compute, _same)
    second = derived("thing", compute, _same)
    assert first == second == {"a": [1.5, -2], "b": "x"}
    assert len(calls) == 1
    assert sorted(p.name for p in cached.iterdir()) == [".key", f"thing-{package_digest()}.json"]


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
    (file,) = cached.glob("*.json")
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

    def refuse(source: str, target: object, **where: object) -> None:
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


def _entry(cached: Path) -> Path:
    """The one stored entry."""
    (entry,) = cached.glob("*.json")
    return entry


def _restamp(cached: Path, payload: bytes) -> None:
    """Store `payload` in the one entry with a valid HMAC (as a buggy writer of this user
    would): what remains to refuse it is the check of its values."""
    entry = _entry(cached)
    key = entry.name.removesuffix(".json")
    secret = (cached / ".key").read_bytes()
    entry.write_bytes(cache._mac(secret, key, payload) + b"\n" + payload)


def test_a_changed_input_folder_computes_afresh(cached: Path, tmp_path: Path) -> None:
    """The key covers the input folders: a re-calibrated workload file is never served the
    value derived from the old one."""
    workloads = tmp_path / "workloads"
    workloads.mkdir()
    (workloads / "w.yaml").write_text("rate: 80\n")
    assert derived("thing", lambda: 5.96, _same, inputs=[workloads]) == 5.96
    assert derived("thing", lambda: 0.0, _same, inputs=[workloads]) == 5.96
    (workloads / "w.yaml").write_text("rate: 81\n")
    assert derived("thing", lambda: 5.80, _same, inputs=[workloads]) == 5.80


def test_a_value_with_other_numbers_but_no_valid_hmac_is_refused(cached: Path) -> None:
    """Another writer of a shared cache folder (no access to the user's 0600 key) stores the
    same shape with other numbers: refused and computed again; so is a value moved under
    another key, and one signed by another key."""
    derived("thing", lambda: {"speedup": 5.8}, _same)
    entry = _entry(cached)
    forged = b'{"speedup": 99.0}'
    entry.write_bytes(entry.read_bytes().split(b"\n")[0] + b"\n" + forged)
    assert derived("thing", lambda: {"speedup": 5.8}, _same) == {"speedup": 5.8}
    other = hmac.new(b"x" * 32, forged, hashlib.sha256).hexdigest().encode()
    entry.write_bytes(other + b"\n" + forged)
    assert derived("thing", lambda: {"speedup": 5.8}, _same) == {"speedup": 5.8}
    moved = entry.read_bytes()
    derived("other", lambda: {"speedup": 1.0}, _same)
    (cached / entry.name.replace("thing", "other")).write_bytes(moved)
    assert derived("other", lambda: {"speedup": 1.0}, _same) == {"speedup": 1.0}


def test_a_key_file_others_could_read_or_of_another_shape_is_replaced(cached: Path) -> None:
    """A key readable by others (mode 0644) is not trusted: entries signed with it are
    refused and a new private key made."""
    derived("thing", lambda: 1, _same)
    key = cached / ".key"
    key.chmod(0o644)
    assert derived("thing", lambda: 2, _same) == 2
    assert key.stat().st_mode & 0o777 == 0o600
    assert derived("thing", lambda: 3, _same) == 2


def test_a_nan_is_refused_on_read_and_never_stored(cached: Path) -> None:
    """A stored NaN (even with a valid HMAC) is computed again; a computed NaN is returned
    but not stored."""
    derived("thing", lambda: {"rate": 1.0}, _same)
    _restamp(cached, b'{"rate": NaN}')
    assert derived("thing", lambda: {"rate": 2.0}, _same) == {"rate": 2.0}
    nan = derived("nan", lambda: float("nan"), _same)
    assert nan != nan
    assert not list(cached.glob("nan-*.json"))


def test_a_fifo_a_device_link_and_a_huge_file_are_never_read(
    cached: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO in the entry's place (which hung the report), a symlink to /dev/zero (read
    without bound) and a file past the cap are each skipped and the value computed."""
    derived("thing", lambda: 1, _same)
    entry = _entry(cached)
    entry.unlink()
    os.mkfifo(entry)
    assert derived("thing", lambda: 2, _same) == 2
    entry.unlink()
    entry.symlink_to("/dev/zero")
    assert derived("thing", lambda: 3, _same) == 3
    assert not entry.is_symlink()  # the rename replaced the link itself
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 8)
    assert derived("thing", lambda: [4, 4, 4, 4], _same) == [4, 4, 4, 4]
    assert derived("thing", lambda: "computed", _same) == "computed"


def test_a_derived_folder_symlink_is_never_written_through(cached: Path, tmp_path: Path) -> None:
    """`derived/` a symlink to another folder: the value is returned, nothing is written
    there, and nothing is read from there."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cached.parent.mkdir(parents=True)
    cached.symlink_to(elsewhere)
    assert derived("thing", lambda: {"k": 1}, _same) == {"k": 1}
    assert list(elsewhere.iterdir()) == []


def test_the_waterfall_refuses_a_field_of_another_type() -> None:
    """The report's waterfall checks every stored field: a string, a bool, a NaN or a
    missing field is refused (TypeError, so `derived` computes again) instead of crashing
    the report or drawing "xnan"."""
    from looplab.claims.model import claim_entries
    from looplab.report.claims import waterfall

    part: dict[str, Any] = {
        "knob": "rate",
        "label": "decode rate",
        "slow_value": 80.0,
        "fast_value": 1000.0,
        "seconds": -50.0,
        "speedup_x": 6.0,
    }
    good = {"slow_s": 60.0, "fast_s": 10.0, "units": 3, "parts": [part]}
    name = next(iter(claim_entries()))
    (loaded,) = waterfall._load({name: good})
    assert loaded.decomposition.parts[0].speedup_x == 6.0
    bad_parts = [
        {**part, "speedup_x": "6"},
        {**part, "speedup_x": math.nan},
        {**part, "seconds": True},
        {"knob": "rate"},
    ]
    for bad in bad_parts:
        with pytest.raises(TypeError):
            waterfall._load({name: {**good, "parts": [bad]}})
    with pytest.raises(TypeError):
        waterfall._load({name: {**good, "units": "3"}})
    with pytest.raises(TypeError):
        waterfall._load([good])
