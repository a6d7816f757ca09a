"""Model policies: what the simulated model says. One module per policy.

A request picks its policy only through the model name: `looplab-<policy>`. To add one,
write `looplab/backends/policies/<name>.py` with a class satisfying `ModelPolicy` and add
one line to `POLICIES` below.
"""

from __future__ import annotations

from collections.abc import Callable

from looplab.backends.policies.base import ModelPolicy, PlannedToolCall, PolicyContext, Reply
from looplab.backends.policies.lorem import LoremPolicy
from looplab.backends.policies.models import BEHAVIOURS
from looplab.backends.policies.replay import ReplayPolicy
from looplab.backends.policies.scripted import ScriptedPolicy
from looplab.backends.policies.workload import WorkloadPolicy

__all__ = [
    "MODEL_PREFIX",
    "POLICIES",
    "ModelPolicy",
    "PlannedToolCall",
    "PolicyContext",
    "Reply",
    "model_ids",
]

MODEL_PREFIX = "looplab-"
"""Served model ids are this prefix plus the policy name."""

POLICIES: dict[str, Callable[[], ModelPolicy]] = {
    "lorem": LoremPolicy,
    "scripted": ScriptedPolicy,
    "replay": ReplayPolicy,
    "workload": WorkloadPolicy,
    "small-fast": lambda: ScriptedPolicy(behaviour=BEHAVIOURS["small-fast"]),
    "large-slow": lambda: ScriptedPolicy(behaviour=BEHAVIOURS["large-slow"]),
}
"""Policy name -> factory (`small-fast`, `large-slow`: the scripted policy with a model
behaviour, `models.py`)."""


def model_ids() -> list[str]:
    """The model ids the simulator serves, sorted."""
    return sorted(MODEL_PREFIX + name for name in POLICIES)
