"""Connection to a Docker engine: the local socket or `DOCKER_HOST`, with a fix when absent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looplab.errors import PrerequisiteError

if TYPE_CHECKING:
    import docker

__all__ = ["ENGINE_FIX", "connect_engine"]

ENGINE_FIX = (
    "start a Docker engine: as root, `apt-get install -y docker.io && (dockerd "
    ">/var/log/dockerd.log 2>&1 &)`; or point DOCKER_HOST at a remote engine, e.g. "
    "DOCKER_HOST=ssh://user@host or DOCKER_HOST=tcp://host:2376 with DOCKER_TLS_VERIFY=1"
)


def connect_engine(timeout_s: float = 30.0) -> docker.DockerClient:
    """Return a client of the engine that `DOCKER_HOST` (or the local socket) names.

    Args:
        timeout_s: HTTP timeout of API calls made through the client.

    Returns:
        A connected `docker.DockerClient` whose engine answered a ping.

    Raises:
        PrerequisiteError: the `docker` package is missing or no engine answers.
    """
    try:
        import docker
    except ImportError as exc:
        raise PrerequisiteError(
            "the 'docker' Python package is not installed",
            fix="pip install 'docker>=7,<8' (it is a dependency of looplab)",
        ) from exc
    try:
        client = docker.from_env(timeout=int(max(timeout_s, 1)))
        client.ping()
    except Exception as exc:  # any failure to reach the engine has the same fix
        raise PrerequisiteError(
            f"no Docker engine answers ({type(exc).__name__}: {exc})", fix=ENGINE_FIX
        ) from exc
    return client
