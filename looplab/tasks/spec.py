"""`task.yaml`: what a task asks, which services it needs, how it is checked, its limits."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from looplab.config import StrictModel

__all__ = ["CheckSpec", "FamilyParameter", "Limits", "ServiceSpec", "TaskSpec"]


class ServiceSpec(StrictModel):
    """A server started inside the sandbox before the agent runs (docs site, web app)."""

    name: str
    """Name; the prompt placeholder `{<name>_url}` becomes its base URL."""
    command: str
    """Shell command; `{port}` becomes the port to listen on and `{bind}` the address to
    bind (127.0.0.1 in a local sandbox, 0.0.0.0 in a container so a published port
    reaches it)."""
    port: int = Field(default=8000, ge=1, le=65535)
    """Port inside the sandbox when it has its own network namespace."""


class CheckSpec(StrictModel):
    """How a run's outcome is judged, independently of what the agent says."""

    command: str
    """Shell command run in the sandbox after the agent; exit 0 means solved."""
    restore: list[str] = Field(default_factory=list)
    """Workspace paths (files or folders) reset from the pristine task files first."""
    timeout_s: float = Field(default=300.0, gt=0)
    """Longest the check may take."""


class Limits(StrictModel):
    """Per-task limits for the agent."""

    max_steps: int = Field(default=60, ge=1)
    """Model calls allowed."""
    wall_time_s: float = Field(default=900.0, gt=0)
    """Wall-time budget of the run: the agent's deadline (`AgentConfig.wall_time_budget_s`)
    is at most this."""


class FamilyParameter(StrictModel):
    """The parameter of a parametric family."""

    name: str = "n"
    """Placeholder in the prompt."""
    min: int = Field(default=1, ge=0)
    """Smallest value."""
    max: int = Field(ge=1)
    """Largest value."""
    default: int = Field(ge=0)
    """Value used when none is given."""


class TaskSpec(StrictModel):
    """`task.yaml`."""

    title: str
    """One line."""
    kind: Literal["coding", "web"]
    """Which agent solves it."""
    category: str
    """bug-fix, implement-from-docs, refactor, slow-tests, flaky-tests, form, ..."""
    prompt: str
    """The user message; `{docs_url}`, `{app_url}`, `{n}` placeholders are filled in."""
    services: list[ServiceSpec] = Field(default_factory=list)
    """Servers started in the sandbox."""
    check: CheckSpec
    """The verdict."""
    limits: Limits = Field(default_factory=Limits)
    """Agent limits."""
    network: Literal["none", "bridge"] = "none"
    """Sandbox network; web tasks need `bridge` so the host's browser reaches the app."""
    family: FamilyParameter | None = None
    """Set for a parametric family."""
    include: dict[str, str] = Field(default_factory=dict)
    """Shared files copied into the workspace: workspace path -> path under the suite
    folder (`tasks/<kind>/`), e.g. `app/webapp.py: _shared/webapp.py`."""
