"""`open_sandbox`: make the sandbox a `SandboxConfig` asks for (registry `SANDBOX_KINDS`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from looplab.errors import ConfigError
from looplab.sandbox_contract import EventSink, Sandbox, SandboxConfig

__all__ = ["SANDBOX_KINDS", "SandboxOpener", "open_sandbox"]

SandboxOpener = Callable[
    [SandboxConfig, Path | None, EventSink | None, str, str], Awaitable[Sandbox]
]
"""(config, task_dir, sink, experiment, run_id) -> a ready sandbox."""


async def _local(
    config: SandboxConfig, task_dir: Path | None, sink: EventSink | None, _exp: str, _run: str
) -> Sandbox:
    from looplab.sandboxes.local import LocalSandbox

    return await LocalSandbox.create(task_dir, config=config, sink=sink)


async def _docker(
    config: SandboxConfig, task_dir: Path | None, sink: EventSink | None, exp: str, run: str
) -> Sandbox:
    from looplab.sandboxes.docker import DockerSandbox

    return await DockerSandbox.create(
        task_dir, config=config, sink=sink, experiment=exp, run_id=run
    )


SANDBOX_KINDS: dict[str, SandboxOpener] = {"local": _local, "docker": _docker}
"""Sandbox kind (`SandboxConfig.kind`) -> its opener; a new kind joins with one line here and
one value in `SandboxConfig.kind` (a test checks the two agree)."""


async def open_sandbox(
    config: SandboxConfig,
    task_dir: Path | None = None,
    *,
    sink: EventSink | None = None,
    experiment: str = "",
    run_id: str = "",
) -> Sandbox:
    """Create the sandbox of `config.kind` with `task_dir` copied in.

    Args:
        config: which kind, image and limits.
        task_dir: directory copied into the workspace.
        sink: receives the sandbox's timing events.
        experiment: docker label `looplab.experiment`.
        run_id: docker label `looplab.run`.

    Returns:
        A ready sandbox.

    Raises:
        ConfigError: an unregistered kind (the message lists the registered ones).
        PrerequisiteError: the kind's prerequisite (engine, image, bubblewrap) is missing.
        SandboxError: the sandbox did not start.
    """
    opener = SANDBOX_KINDS.get(config.kind)
    if opener is None:
        raise ConfigError(
            f"unknown sandbox kind {config.kind!r}",
            field="sandbox.kind",
            allowed=sorted(SANDBOX_KINDS),
        )
    return await opener(config, task_dir, sink, experiment, run_id)
