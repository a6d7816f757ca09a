"""Contained by default: when `looplab run` may use a local sandbox that isolates nothing.

A local sandbox is contained by bubblewrap; on a host without `bwrap` (or with
`sandbox.isolation: none`) its commands are plain processes of this user on this host.
Who chooses those commands decides whether that is acceptable:

- **scripted** cells: a simulated backend whose policy is shipped with looplab and plays
  known commands (`SCRIPTED_POLICIES`: the bundled tasks' reference solutions, the
  calibrated workload's synthetic tools, lorem's text). They run without bubblewrap, with
  the warning line, so `make demo` works on a fresh machine.
- **non-scripted** cells: a `real` backend (an API model chooses the commands), a
  simulated policy that replays recorded commands (`replay`), and every `wrapped` agent
  (a foreign command that always runs on this host, outside any looplab sandbox). Without
  bubblewrap these are refused unless `sandbox.isolation: none` says so on purpose.

Whenever something runs uncontained, `looplab run` prints one warning line per cause,
naming what is not contained (`uncontained_warnings`).
"""

from __future__ import annotations

from looplab.errors import PrerequisiteError
from looplab.experiments.config import ExperimentConfig
from looplab.sandboxes.local import isolation_gap

__all__ = ["SCRIPTED_POLICIES", "check_containment", "non_scripted", "uncontained_warnings"]

SCRIPTED_POLICIES = frozenset({"scripted", "workload", "lorem"})
"""Simulated policies whose commands are looplab's own (the rest come from elsewhere)."""


def non_scripted(config: ExperimentConfig) -> list[str]:
    """What in `config` runs commands looplab did not write (see the module docstring)."""
    found: list[str] = []
    for backend in config.backends:
        if backend.kind == "real":
            found.append(f"backend {backend.name!r} (a real model)")
        elif backend.policy not in SCRIPTED_POLICIES:
            found.append(f"backend {backend.name!r} (policy {backend.policy!r})")
    wrapped = {agent.name for agent in config.wrapped}
    found += [f"wrapped agent {name!r}" for name in config.agents if name in wrapped]
    return found


def uncontained_warnings(config: ExperimentConfig) -> list[str]:
    """One line per thing of this run that is not contained (empty when all is)."""
    lines: list[str] = []
    gap = isolation_gap(config.sandbox) if config.sandbox.kind == "local" else None
    if gap is not None:
        lines.append(f"WARNING: {gap}")
    wrapped = {agent.name for agent in config.wrapped}
    lines += [
        f"WARNING: wrapped agent {name!r} runs its command on this host, outside any sandbox"
        for name in config.agents
        if name in wrapped
    ]
    return lines


def check_containment(config: ExperimentConfig) -> list[str]:
    """Refuse non-scripted cells in a local sandbox that bubblewrap does not contain,
    unless `sandbox.isolation: none` opts in; return the warning lines to print.

    Raises:
        PrerequisiteError: no bubblewrap, isolation `auto`, and a non-scripted cell; the
            message names the cells and the fix (install bubblewrap, or opt in).
    """
    uncontained = config.sandbox.kind == "local" and isolation_gap(config.sandbox) is not None
    if uncontained and config.sandbox.isolation == "auto":
        chosen = non_scripted(config)
        if chosen:
            raise PrerequisiteError(
                f"no bubblewrap on PATH: the local sandbox would not contain "
                f"{', '.join(chosen)} (their commands would run as this user on this host)",
                fix="apt-get install -y bubblewrap; or run uncontained on purpose with "
                "-s sandbox.isolation=none",
            )
    return uncontained_warnings(config)
