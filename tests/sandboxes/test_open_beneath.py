"""The helper's workspace file operations (`_inside_files.open_beneath` and its users), on a
host folder: no symlink is followed, nothing outside the workspace is opened, by openat2
and by the O_NOFOLLOW walk alike."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from looplab.sandboxes import _inside_files as _inside


@pytest.fixture(params=["openat2", "walk"])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A workspace with the helper's root fd set, through each of the two open paths."""
    root = tmp_path / "ws"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    saved = dict(_inside._root), dict(_inside._openat2_state)
    _inside.set_root(fd)
    _inside._openat2_state["usable"] = None if request.param == "openat2" else False
    try:
        yield root
    finally:
        os.close(fd)
        _inside._root.update(saved[0])
        _inside._openat2_state.update(saved[1])


def test_files_round_trip_and_folders_are_made(workspace: Path) -> None:
    """write makes missing folders and replaces content; read and list see it."""
    _inside.write_file("a/b/c.txt", b"first, longer")
    _inside.write_file("a/b/c.txt", b"second")
    assert _inside.read_file("a/b/c.txt") == b"second"
    assert (workspace / "a/b/c.txt").read_bytes() == b"second"
    assert _inside.list_files(".") == ["a/b/c.txt"]
    assert _inside.list_files("a") == ["a/b/c.txt"]


def test_no_symlink_is_followed_in_any_position(workspace: Path, tmp_path: Path) -> None:
    """A link as the file, as a folder on the way, or pointing inside: all refused."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("host secret")
    (workspace / "inner.txt").write_text("in")
    (workspace / "lnk").symlink_to(outside)
    (workspace / "file_link").symlink_to(outside / "secret.txt")
    (workspace / "inner_link").symlink_to("inner.txt")
    for call in (
        lambda: _inside.read_file("lnk/secret.txt"),
        lambda: _inside.read_file("file_link"),
        lambda: _inside.read_file("inner_link"),
        lambda: _inside.write_file("lnk/pwned.txt", b"x"),
        lambda: _inside.write_file("file_link", b"x"),
        lambda: _inside.list_files("lnk"),
    ):
        with pytest.raises(_inside.Refused, match="symlink"):
            call()
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "host secret"


def test_listing_does_not_descend_into_links(workspace: Path, tmp_path: Path) -> None:
    """A link to a folder outside is not walked into by list."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (workspace / "lnk").symlink_to(outside)
    (workspace / "real.txt").write_text("r")
    assert "lnk/secret.txt" not in _inside.list_files(".")


def test_special_files_and_missing_paths(workspace: Path) -> None:
    """A FIFO is refused (it would block); a folder is not a file; missing is not found."""
    os.mkfifo(workspace / "pipe")
    (workspace / "dir").mkdir()
    with pytest.raises(_inside.Refused, match="regular file"):
        _inside.read_file("pipe")
    with pytest.raises(FileNotFoundError):
        _inside.read_file("dir")
    with pytest.raises(FileNotFoundError):
        _inside.read_file("nope.txt")
    with pytest.raises(FileNotFoundError):
        _inside.list_files("nodir")
    with pytest.raises(_inside.Refused, match="climbs out"):
        _inside.read_file("a/../../x")


HOST_FILE_CALLS = {
    "open", "read_bytes", "write_bytes", "read_text", "write_text", "mkdir", "makedirs",
    "walk", "fwalk", "lchown", "chown", "chmod", "unlink", "remove", "rename", "replace",
    "is_file", "is_dir", "exists", "resolve", "realpath", "iterdir", "glob", "rglob", "stat",
    "lstat", "symlink_to", "copyfile", "copy2", "copytree", "rmtree", "chown_tree", "touch",
}  # fmt: skip
HOST_SIDE_ALLOWED = {
    # before the helper starts nothing runs in the sandbox: the task's files are copied in
    # and given to the sandbox's user
    "_start": {"copytree", "chown_tree", "mkdir", "rmtree"},
    # after every sandbox process is killed; shutil.rmtree works by directory fds on Linux
    # (rmtree.avoids_symlink_attacks), so even a survivor's link swap is not followed
    "close": {"rmtree"},
    # the host's Docker socket, named in the not-contained warning: no workspace path
    "isolation_gap": {"exists"},
}
FILE_TOOLS = ("read_file", "write_file", "list_files")


def _calls_in(function: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            target = node.func
            names.add(
                target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            )
    return names


@pytest.mark.parametrize("module", ["local", "docker"])
def test_every_file_tool_goes_through_the_helper(module: str) -> None:
    """Each sandbox kind's file tools call `_file_request` -> `_channel.file_request` (the
    helper opens the path inside); no other method of the module touches host files. A new
    host-side file operation fails here until it goes through that one function."""
    import looplab.sandboxes as package

    source = Path(package.__path__[0], f"{module}.py").read_text()
    functions = {
        node.name: node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    assert assert_one_door(functions) == []
    assert "file_request" in _calls_in(functions["_file_request"])
    for tool in FILE_TOOLS:
        assert "_file_request" in _calls_in(functions[tool]), tool


def assert_one_door(functions: dict[str, ast.AST]) -> list[str]:
    """Host file calls outside the allowed places, as `function: call` lines."""
    found = []
    for name, function in functions.items():
        for call in sorted(_calls_in(function) & HOST_FILE_CALLS):
            if call not in HOST_SIDE_ALLOWED.get(name, set()):
                found.append(f"{name}: {call}")
    return found
