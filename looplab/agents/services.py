"""Servers inside a task's sandbox (its docs site, its web app), started before the agent.

Each service runs detached (its own session, so the sandbox's per-command process-group cleanup
leaves it running) with its log and pid under `.services/` in the workspace, and is
waited for until its port accepts connections. `stop_services` (called by the task runner
in a `finally`) stops each service's process group, TERM then KILL, and checks it is gone;
the sandbox's close kills anything left either way. A local sandbox gets a port that is free
on this host (so it also works unisolated or with the host's network); a docker sandbox
uses the task's fixed port, published on 127.0.0.1 when its network is `bridge`.
"""

from __future__ import annotations

import shlex
import socket
from dataclasses import dataclass, field

from looplab.errors import SandboxError
from looplab.sandbox_contract import Sandbox
from looplab.sandboxes.groups import parse_stop_report, stop_groups_argv
from looplab.tasks import ServiceSpec

__all__ = ["Services", "inside_urls", "service_ports", "start_services", "stop_services"]

READY_TIMEOUT_S = 20.0
"""Longest a service may take to accept connections."""
STOP_GRACE_S = 2.0
"""How long a service has to exit on SIGTERM before it gets SIGKILL."""

# Popen returns once the child has exec'd, i.e. after its setsid: no window in which the
# sandbox's cleanup of the launching command's process group could still reach it.
_LAUNCH = """
import os, subprocess, sys
os.makedirs(".services", exist_ok=True)
with open(sys.argv[2], "wb") as log:
    child = subprocess.Popen(["sh", "-c", sys.argv[1]], stdin=subprocess.DEVNULL,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
open(sys.argv[3], "w").write(str(child.pid))
"""

_WAIT_READY = """
import socket, sys, time
deadline = time.monotonic() + float(sys.argv[2])
while True:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close(); break
    except OSError:
        if time.monotonic() > deadline: sys.exit("not listening on port " + sys.argv[1])
        time.sleep(0.02)
"""


@dataclass
class Services:
    """Where the started services are.

    Attributes:
        inside: base URL per service as commands in the sandbox reach it.
        host: base URL per service as this host (its browser) reaches it, when it can.
    """

    inside: dict[str, str] = field(default_factory=dict)
    host: dict[str, str] = field(default_factory=dict)


def free_host_port() -> int:
    """A TCP port free on this host's loopback right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def service_ports(sandbox_kind: str, specs: list[ServiceSpec]) -> dict[str, int]:
    """Each service's port, chosen before the sandbox exists (a docker sandbox: the task's
    fixed port; a local one: a port free on this host now), so that the prompt's URLs are
    known early (`eager_sandbox`)."""
    return {s.name: s.port if sandbox_kind == "docker" else free_host_port() for s in specs}


def inside_urls(ports: dict[str, int]) -> dict[str, str]:
    """The services' base URLs as commands in the sandbox reach them."""
    return {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}


async def start_services(
    sandbox: Sandbox, specs: list[ServiceSpec], ports: dict[str, int] | None = None
) -> Services:
    """Start every service and wait until each listens.

    Args:
        sandbox: where they run.
        specs: the task's services.
        ports: a port per service chosen beforehand (`service_ports`); default: chosen now.

    Raises:
        SandboxError: a service did not come up (its log is in the message).
    """
    services = Services()
    docker = getattr(sandbox, "kind", "") == "docker"
    for spec in specs:
        port = (ports or {}).get(spec.name) or (spec.port if docker else free_host_port())
        bind = "0.0.0.0" if docker else "127.0.0.1"
        command = spec.command.replace("{port}", str(port)).replace("{bind}", bind)
        log, pid = f".services/{spec.name}.log", f".services/{spec.name}.pid"
        launch = shlex.join(["python3", "-c", _LAUNCH, command, log, pid])
        await sandbox.exec(launch, timeout_s=10)
        wait = shlex.join(["python3", "-c", _WAIT_READY, str(port), str(READY_TIMEOUT_S)])
        ready = await sandbox.exec(wait, timeout_s=READY_TIMEOUT_S + 5)
        if not ready.ok:
            output = (await sandbox.exec(f"cat {log}", timeout_s=5)).stdout
            raise SandboxError(
                f"service {spec.name} did not start: {ready.stderr.strip()}\n{output[-2000:]}",
                sandbox_id=sandbox.id,
            )
        services.inside[spec.name] = inside_urls({spec.name: port})[spec.name]
        host_port = _host_port(sandbox, port) if docker else port
        if host_port is not None:
            services.host[spec.name] = f"http://127.0.0.1:{host_port}"
    return services


async def stop_services(
    sandbox: Sandbox, specs: list[ServiceSpec], *, grace_s: float = STOP_GRACE_S
) -> list[str]:
    """Stop every service's process group and check that it is gone.

    Each group gets SIGTERM, then SIGKILL after `grace_s` seconds if anything is left (no
    shell: the in-sandbox helper's `stop-groups` does it with `os.killpg`).

    Returns:
        One line per service that needed SIGKILL (empty when all stopped on SIGTERM).

    Raises:
        SandboxError: a service's processes survived SIGKILL, or the sandbox cannot run
            the stop command (the sandbox's close still kills everything in it).
    """
    if not specs:
        return []
    pidfiles = [f".services/{spec.name}.pid" for spec in specs]
    result = await sandbox.exec(stop_groups_argv(grace_s, pidfiles), timeout_s=grace_s + 15)
    try:
        stopped = parse_stop_report(result.stdout)
    except (ValueError, KeyError, TypeError):
        problem = result.stderr.strip()[-500:] or f"exit code {result.exit_code}, no report"
        raise SandboxError(f"could not stop services: {problem}", sandbox_id=sandbox.id) from None
    survivors = [stop for stop in stopped if stop.survivors]
    if survivors:
        raise SandboxError(
            f"service processes survived SIGKILL: {survivors}", sandbox_id=sandbox.id
        )
    return [
        f"process group {stop.pgid} needed SIGKILL" for stop in stopped if stop.signal == "KILL"
    ]


def _host_port(sandbox: Sandbox, port: int) -> int | None:
    published = getattr(sandbox, "published_port", None)
    if published is None:
        return None
    value = published(port)
    return int(value) if value is not None else None
