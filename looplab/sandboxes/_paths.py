"""The lexical workspace path check shared by every sandbox: nothing may name a file outside it.

`workspace_relative` refuses absolute paths outside the workspace, `..` climbing out and
NUL bytes. Symlinks are not checked here: a check on the host and an open after it could
be raced by a process in the sandbox that swaps a folder for a link. The helper inside the
sandbox opens each path beneath the workspace's directory fd without following any link
(`_inside_files.open_beneath`), as the sandbox's user.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from looplab.errors import SandboxError

__all__ = ["workspace_relative"]


def workspace_relative(path: str, workdir: str, *, sandbox_id: str) -> PurePosixPath:
    """Return `path` as a normalised path relative to the workspace root.

    Args:
        path: a relative path, or an absolute one under `workdir`.
        workdir: the workspace root as commands see it (e.g. `/workspace`).
        sandbox_id: id for the error.

    Returns:
        The relative path without `.`/`..` parts (`.` for the root itself).

    Raises:
        SandboxError: the path is absolute outside `workdir`, climbs out with `..`, or
            contains a NUL byte.
    """
    if "\0" in path:
        raise SandboxError(f"path {path!r} contains a NUL byte", sandbox_id=sandbox_id)
    candidate = PurePosixPath(path)
    if candidate.is_absolute():
        try:
            candidate = candidate.relative_to(workdir)
        except ValueError:
            raise SandboxError(
                f"path {path!r} is outside the workspace {workdir}: use a relative path",
                sandbox_id=sandbox_id,
            ) from None
    parts: list[str] = []
    for part in candidate.parts:
        if part == "..":
            if not parts:
                raise SandboxError(
                    f"path {path!r} climbs out of the workspace with '..'", sandbox_id=sandbox_id
                )
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return PurePosixPath(*parts) if parts else PurePosixPath(".")
