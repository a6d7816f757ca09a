"""`open_sandbox`: make the sandbox a `SandboxConfig` asks for."""

from __future__ import annotations

from pathlib import Path

from looplab.sandbox import EventSink, Sandbox, SandboxConfig

__all__ = ["open_sandbox"]


async def open_sandbox(
    config: SandboxConfig,
    task_dir: Path | None = None,
    *,
    sink: EventSink | None = None,
    experiment: str = "",
    run_id: str = "",
) -> Sandbox:
    """Create a LocalSandbox or DockerSandbox with `task_dir` copied in.

    Args:
        config: which kind, image and limits.
        task_dir: directory copied into the workspace.
        sink: receives the sandbox's timing events.
        experiment: docker label `looplab.experiment`.
        run_id: docker label `looplab.run`.

    Returns:
        A ready sandbox.

    Raises:
        PrerequisiteError: the kind's prerequisite (engine, image, bubblewrap) is missing.
        SandboxError: the sandbox did not start.
    """
    if config.kind == "docker":
        from looplab.sandboxes.docker import DockerSandbox

        return await DockerSandbox.create(
            task_dir, config=config, sink=sink, experiment=experiment, run_id=run_id
        )
    from looplab.sandboxes.local import LocalSandbox

    return await LocalSandbox.create(task_dir, config=config, sink=sink)
