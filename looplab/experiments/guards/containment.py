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
naming what is not contained.

The same rule holds at every door that executes commands looplab did not write:
`require_contained` is it, called by `check_containment` (`looplab run`) and by
`looplab replay --mode live` (a trace's recorded commands); `looplab wrap` runs a foreign
agent on this host by design and only prints `WRAP_WARNING`.
"""

from __future__ import annotations

from looplab.errors import PrerequisiteError
from looplab.experiments.config import ExperimentConfig
from looplab.sandbox_contract import SandboxConfig
from looplab.sandboxes.local import isolation_gap

__all__ = [
    "SCRIPTED_POLICIES",
    "WRAP_WARNING",
    "check_containment",
    "non_scripted",
    "require_contained",
]

WRAP_WARNING = (
    "WARNING: the wrapped agent command runs on this host, outside any looplab sandbox "
    "(with --replay its model replies come from the recording)"
)
"""The line `looplab wrap` prints: its agent is never contained, by design."""

SCRIPTED_POLICIES = frozenset({"scripted", "workload", "lorem", "small-fast", "large-slow"})
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


def require_contained(
    sandbox: SandboxConfig, what: str, opt_in: str = "-s sandbox.isolation=none"
) -> list[str]:
    """The one containment rule: refuse to run `what` (commands looplab did not write) in
    a local sandbox that bubblewrap does not contain, unless `sandbox.isolation: none`
    opts in; return the warning lines to print (empty when contained).

    `what` names who chose the commands (e.g. "backend 'api' (a real model)"); an empty
    `what` means only looplab's own scripted commands run, which are never refused.
    `opt_in` is how the caller's command line says `isolation: none`, named in the fix.

    Raises:
        PrerequisiteError: no bubblewrap, isolation `auto`, and a non-empty `what`.
    """
    gap = isolation_gap(sandbox) if sandbox.kind == "local" else None
    if gap is None:
        return []
    if what and sandbox.isolation == "auto":
        raise PrerequisiteError(
            f"no bubblewrap on PATH: the local sandbox would not contain {what} "
            "(their commands would run as this user on this host)",
            fix=f"apt-get install -y bubblewrap; or run uncontained on purpose with {opt_in}",
        )
    return [f"WARNING: {gap}"]


def check_containment(config: ExperimentConfig) -> list[str]:
    """Refuse non-scripted cells in a local sandbox that bubblewrap does not contain,
    unless `sandbox.isolation: none` opts in; return the warning lines to print.

    Raises:
        PrerequisiteError: no bubblewrap, isolation `auto`, and a non-scripted cell; the
            message names the cells and the fix (install bubblewrap, or opt in).
    """
    lines = require_contained(config.sandbox, ", ".join(non_scripted(config)))
    wrapped = {agent.name for agent in config.wrapped}
    return lines + [
        f"WARNING: wrapped agent {name!r} runs its command on this host, outside any sandbox"
        for name in config.agents
        if name in wrapped
    ]
