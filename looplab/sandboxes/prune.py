"""Remove leftover sandbox containers (labelled `looplab=1`).

`prune()` removes those whose owner process is gone (a crashed or killed run); with
`everything=True`, every looplab container. An experiment runner calls `prune()` before it
starts, `looplab sandbox prune` calls it by hand.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from looplab.sandboxes.engine import connect_engine
from looplab.sandboxes.owner import owner_gone

if TYPE_CHECKING:
    import docker

__all__ = ["PruneResult", "looplab_containers", "prune"]


@dataclass
class PruneResult:
    """What `prune` did.

    Attributes:
        removed: ids (12 hex digits) of the containers removed.
        kept: ids of looplab containers left because their owner still runs.
    """

    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def prune(
    *,
    everything: bool = False,
    run_id: str | None = None,
    client: docker.DockerClient | None = None,
    wait_s: float = 15.0,
) -> PruneResult:
    """Remove looplab containers whose owner is gone (or all of them).

    Args:
        everything: remove every looplab container, owners alive or not.
        run_id: only consider containers of this run (label `looplab.run`).
        client: engine client; default `connect_engine()`.
        wait_s: how long to wait for containers whose removal was already under way.

    Returns:
        The removed and kept container ids (removed ones are gone when this returns).

    Raises:
        PrerequisiteError: no engine answers.
    """
    import docker as docker_sdk

    client = client or connect_engine()
    result = PruneResult()
    removing: list[Any] = []
    for container in looplab_containers(client, *([f"looplab.run={run_id}"] if run_id else [])):
        owner = container.labels.get("looplab.owner", "")
        if everything or owner_gone(owner):
            try:
                container.remove(force=True)
            except docker_sdk.errors.NotFound:
                pass  # it went away by itself (auto-remove) meanwhile
            except docker_sdk.errors.APIError as exc:
                if "already in progress" not in str(exc):
                    raise
                removing.append(container)  # its auto-remove is under way
            result.removed.append(str(container.id)[:12])
        else:
            result.kept.append(str(container.id)[:12])
    _wait_gone(removing, wait_s)
    return result


def looplab_containers(client: Any, *labels: str) -> list[Any]:
    """Every looplab container (label `looplab=1`, running or not) that also carries each
    of `labels` (`key=value`), as docker-py containers.

    A container that goes away (an auto-remove) between the engine's list and docker-py's
    inspect of it is gone, not an error (seen beside two busy jobs)."""
    filters = {"label": ["looplab=1", *labels]}
    return list(client.containers.list(all=True, filters=filters, ignore_removed=True))


def _wait_gone(containers: list[Any], wait_s: float) -> None:
    """Wait until containers whose removal is under way are gone (removed means gone)."""
    import docker as docker_sdk

    deadline = time.monotonic() + wait_s
    for container in containers:
        while time.monotonic() < deadline:
            try:
                container.reload()
            except docker_sdk.errors.NotFound:
                break
            time.sleep(0.05)
