"""Workspace path checks shared by every sandbox: nothing may name a file outside it.

`workspace_relative` is the lexical check (absolute paths outside the workspace, `..`
climbing out, NUL bytes); `resolve_on_host` adds the symlink check for a workspace that
lives on this host. The Docker helper repeats the symlink check inside the container,
where the links resolve.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from looplab.errors import SandboxError

__all__ = ["resolve_on_host", "workspace_relative"]


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


def resolve_on_host(root: Path, relative: PurePosixPath, *, sandbox_id: str) -> Path:
    """Return the host path of a workspace path, refusing symlinks that point outside.

    Args:
        root: the workspace directory on this host.
        relative: a path from `workspace_relative`.
        sandbox_id: id for the error.

    Returns:
        The fully resolved host path, inside `root`.

    Raises:
        SandboxError: the path resolves (through a symlink) outside `root`.
    """
    base = root.resolve()
    resolved = (base / relative).resolve()
    if resolved != base and not resolved.is_relative_to(base):
        raise SandboxError(
            f"path {str(relative)!r} resolves outside the workspace (a symlink points out)",
            sandbox_id=sandbox_id,
        )
    return resolved
