"""Experiment configs: what to run (backends x agents x tasks x repetitions) and how.

An experiment YAML is a serialized `ExperimentConfig`; `-c key.path=value` overrides apply
before validation, and errors name the file, line, field and allowed values.

```yaml
name: quickstart
backends:
  - {name: slow-80, profile: slow-80}
  - {name: fast-750, profile: fast-750, overrides: {reasoning_tokens: 0}}
tasks: [coding/fix-pager, coding/nbugs-4]   # or trace-driven: trace:PATH, workload:PATH
repetitions: 2
sandbox: {kind: local}
budgets: {max_steps: 40}
```
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field, field_validator, model_validator

from looplab.agents.config import AgentConfig
from looplab.backends.policies import POLICIES
from looplab.config import StrictModel
from looplab.experiments.axes import check_axes
from looplab.experiments.choose_config import ChooseSettings
from looplab.experiments.executors.config import ExecutorConfig
from looplab.experiments.wrapped_agent import WrappedAgent
from looplab.latency.presets import resolve_profile
from looplab.latency.profile import LatencyProfile
from looplab.latency.timing import Transport
from looplab.sandbox_contract import SandboxConfig
from looplab.urls import api_root
from looplab.workloads.resolve import WorkloadSettings

__all__ = [
    "MAX_SEED",
    "AgentName",
    "BackendSpec",
    "Budgets",
    "ExperimentConfig",
    "TaskFamily",
    "path_component",
]

AgentName = Literal["auto", "coding", "computer_use", "workload"]

MAX_SEED = 2**63 - 1
"""Largest seed: what the results index (a DuckDB BIGINT column) holds."""
NAME_PATTERN = r"^[A-Za-z0-9_.+-]{1,64}$"


def path_component(value: str) -> str:
    """`value` if it is a plain file name (not `.` or `..`), for names that become paths."""
    if value in (".", ".."):
        raise ValueError(f"{value!r} is not a plain name (it would name a directory above)")
    return value


def _auto_agent() -> list[str]:
    return ["auto"]


class BackendSpec(StrictModel):
    """One backend: a simulated profile, or a real OpenAI-compatible endpoint."""

    name: str = Field(pattern=NAME_PATTERN)
    """Label used in results, reports and trace file names (e.g. `fast-750`): letters,
    digits, `_.+-`, at most 64, not `.` or `..`."""
    kind: Literal["simulated", "real"] = "simulated"
    """`simulated`: looplab's server in-process; `real`: `base_url` + `model`."""
    profile: str | None = None
    """Simulated: a preset name or a profile YAML path (defaults to `name`)."""
    overrides: dict[str, Any] = Field(default_factory=dict)
    """Simulated: profile fields to override (`{decode_tps: 500, ttft_s: 0.2}`)."""
    policy: str = "scripted"
    """Simulated: the model policy (`scripted` drives tasks by their reference solution)."""
    base_url: str | None = None
    """Real: API root including /v1."""
    model: str | None = None
    """Real: model id."""
    api_key_env: str | None = None
    """Real: environment variable holding the key (never the key itself)."""
    transport: Transport = "http"
    """How the bundled agents call it: `http` (a streamed chat completion per call) or
    `websocket` (turns on one persistent Responses WebSocket per run; each call pays the
    profile's `websocket_overhead_s` instead of `request_overhead_s`). An axis:
    `backend.transport: [http, websocket]`. Wrapped agents bring their own transport."""

    _name = field_validator("name")(path_component)

    @field_validator("policy")
    @classmethod
    def _known_policy(cls, value: str) -> str:
        """A registered simulator policy (`looplab.backends.policies.POLICIES`)."""
        if value not in POLICIES:
            raise ValueError(f"unknown policy {value!r}; allowed: {', '.join(sorted(POLICIES))}")
        return value

    _is_api_root = field_validator("base_url")(api_root)

    @model_validator(mode="after")
    def _complete(self) -> BackendSpec:
        if self.kind == "real" and (not self.base_url or not self.model):
            raise ValueError("a real backend needs base_url and model")
        return self

    def latency_profile(self, seed: int) -> LatencyProfile | None:
        """This backend's latency profile with its overrides and `seed` (None for a real one).

        Raises:
            ConfigError: unknown preset, unreadable profile file or bad override.
        """
        if self.kind == "real":
            return None
        return resolve_profile(self.profile or self.name, values={**self.overrides, "seed": seed})


class TaskFamily(StrictModel):
    """A parametric task family swept over parameter values (e.g. N bugs)."""

    family: str
    """Family task id, e.g. `coding/nbugs`."""
    values: list[int] = Field(min_length=1)
    """Parameter values; each becomes the task `<family>-<value>`."""


class Budgets(StrictModel):
    """Per-run limits; a run that hits one ends with that reason recorded."""

    max_steps: int = Field(default=60, ge=1, le=100_000, strict=True)
    """Model calls per run."""
    max_tokens: int | None = Field(default=None, ge=1, strict=True)
    """Total tokens (prompt + completion) per run."""
    wall_time_s: float | None = Field(default=None, gt=0, strict=True)
    """Wall time per run (strict, as every budget: `true` is not 1 s): the agent's own
    deadline (`AgentConfig.wall_time_budget_s`, with the cap below on the wall clock), a
    run past it ends `wall_time_budget`."""
    task_timeout_s: float | None = Field(default=None, gt=0, strict=True)
    """Task time cap (a deadline): a run whose task time passes it ends `timeout`, cut at
    the cap, and counts as not finished. On the wall clock the run is stopped at its
    first step boundary past the cap, and a tool call still running there is cut (its
    process tree killed, the call recorded with `cut`); on the virtual clock the cap applies
    to the computed task time. An axis: `budgets.task_timeout_s: [60, 300]`."""


class ExperimentConfig(StrictModel):
    """A whole experiment (see the module docstring)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,100}$")
    """Experiment name; the default output directory is `runs/<name>` (letters, digits,
    `_.-`, at most 100, not `.` or `..`)."""
    description: str = ""
    """What the experiment asks."""
    backends: list[BackendSpec] = Field(min_length=1)
    """Backends to compare (names unique)."""
    agents: list[str] = Field(default_factory=_auto_agent)
    """Agents (unique); `auto` picks the task kind's agent (`workload` for trace-driven
    tasks); a `wrapped` agent's name runs that command."""
    wrapped: list[WrappedAgent] = Field(default_factory=list)
    """Foreign agent commands, run through the pacing proxy (`looplab.experiments.wrapped`)."""
    tasks: list[str | TaskFamily] = Field(min_length=1)
    """Task ids, globs (`coding/*`), families with parameter lists, or trace-driven tasks
    (see `looplab.workloads.resolve`): `trace:PATH` (a trace file, or a directory: one task
    per trace) replays a recorded run's shape; `workload:PATH` (a workload model YAML from
    `looplab calibrate`) or `workload/<id>` (a bundled one) draws a shape per repetition,
    the same for every backend. Trace-driven tasks need simulated backends."""
    repetitions: int = Field(default=1, ge=1)
    """Runs per (backend, agent, task)."""
    max_cells: int = Field(default=10_000, ge=1)
    """Refuse an experiment of more cells (backends x agents x tasks x repetitions) than
    this, before anything runs; raise it on purpose for a bigger one."""
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    """Base seed; repetition r uses seed + r for the simulator and the policy (so seed +
    repetitions - 1 must stay within 2**63 - 1, what the results index stores)."""
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    """Sandbox kind and limits."""
    agent: AgentConfig = Field(default_factory=AgentConfig)
    """Agent loop settings (tool concurrency, retries, completion cap)."""
    budgets: Budgets = Field(default_factory=Budgets)
    """Per-run limits."""
    axes: dict[str, list[Any]] = Field(default_factory=dict)
    """Config fields as matrix dimensions: dotted path -> values, cartesian product
    (`agent.streaming_dispatch: [false, true]`, `backend.profile.prefix_cache: [...]`;
    see `looplab.experiments.axes`)."""
    variants: list[dict[str, Any]] = Field(default_factory=list)
    """Explicit combinations of axis values (path -> value; each one x `axes`), e.g. each
    knob alone and all together."""
    workload: WorkloadSettings = Field(default_factory=WorkloadSettings)
    """How trace-driven tasks run: tool-time scale, CPU share of the synthetic work,
    harness-time emulation."""
    concurrency: int = Field(default=1, ge=1, le=64)
    """Runs in flight at once."""
    deadline_s: float | None = Field(default=None, gt=0)
    """Your deadline for a task, in seconds: `looplab run`'s bottom lines and the report
    give each arm's share of runs solved within it and the area under success vs time
    budget up to it (`looplab report --deadline` overrides it). Unlike
    `budgets.task_timeout_s` it stops nothing. None: a cap picked from the slowest arm's
    median task time."""
    clock: Literal["wall", "virtual"] = "wall"
    """`wall`: the simulator really waits; `virtual`: model time computed from the profile,
    tools run for real, the timeline composed from both."""
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    """Where the cells run: in this process (default) or as Ray tasks
    (`looplab.experiments.executors`); not stored with the experiment (resume anywhere)."""
    output_dir: Path | None = None
    """Where traces and the results database go (default `runs/<name>`)."""
    choose: ChooseSettings | None = None
    """Which to use: after the cells, print the policy table of backend `choose.a`
    against `choose.b` (`looplab.experiments.choose_config`)."""

    _name = field_validator("name")(path_component)

    @model_validator(mode="after")
    def _known_agents(self) -> ExperimentConfig:
        known = {*get_args(AgentName), *(w.name for w in self.wrapped)}
        unknown = [a for a in self.agents if a not in known]
        if unknown:
            raise ValueError(
                f"agents: unknown {unknown}; allowed: {sorted(known)} (a foreign agent "
                "command is declared under `wrapped`)"
            )
        return self

    @model_validator(mode="after")
    def _consistent(self) -> ExperimentConfig:
        """Unique names, seeds that fit the index, and a matrix within `max_cells`."""
        names = [backend.name for backend in self.backends]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"backends: duplicate names {duplicates} (each needs its own)")
        if len(set(self.agents)) != len(self.agents):
            raise ValueError(f"agents: duplicates in {self.agents}")
        most = max(self.repetitions, self.workload.repetitions or 0)
        if self.seed + most - 1 > MAX_SEED:
            raise ValueError(f"seed + repetitions - 1 must be at most {MAX_SEED}")
        tasks = sum(len(t.values) if isinstance(t, TaskFamily) else 1 for t in self.tasks)
        combos = check_axes(self, self.axes, self.variants)
        cells = len(self.backends) * len(self.agents) * tasks * self.repetitions * combos
        if cells > self.max_cells:
            raise ValueError(
                f"{cells} cells (backends x agents x tasks x repetitions) is more than "
                f"max_cells={self.max_cells}; set max_cells to run that many"
            )
        return self

    @model_validator(mode="after")
    def _fanout_on_wall_clock(self) -> ExperimentConfig:
        """Fan-out needs the wall clock: on the virtual clock a delegate call is a tool
        call timed by its wall time, instant, though its sub-agent's model time is not."""
        values = [self.agent.fanout, *self.axes.get("agent.fanout", [])]
        values += [v.get("agent.fanout") for v in self.variants]
        if self.clock == "virtual" and any(v is True for v in values):
            raise ValueError(
                "agent.fanout: true needs clock: wall (on the virtual clock a delegate call "
                "is timed by its wall time, instant, though its sub-agent's model time is not)"
            )
        return self

    @model_validator(mode="after")
    def _told_time_needs_wall_clock_cap(self) -> ExperimentConfig:
        """Telling the agent its remaining time needs a cap and the wall clock: on the
        virtual clock the agent cannot know its computed task time while it runs."""
        values = [self.agent.tell_remaining_time, *self.axes.get("agent.tell_remaining_time", [])]
        values += [v.get("agent.tell_remaining_time") for v in self.variants]
        if not any(v is True for v in values):
            return self
        if self.clock == "virtual":
            raise ValueError(
                "agent.tell_remaining_time: true needs clock: wall (on the virtual clock "
                "the agent cannot know its computed task time while it runs)"
            )
        if self.budgets.task_timeout_s is None and self.budgets.wall_time_s is None:
            raise ValueError(
                "agent.tell_remaining_time: true needs a time to tell: set "
                "budgets.task_timeout_s (or budgets.wall_time_s)"
            )
        return self

    @model_validator(mode="after")
    def _choose_names_backends(self) -> ExperimentConfig:
        """`choose.a` and `choose.b`: two different backends of this experiment."""
        if self.choose is None:
            return self
        names = [backend.name for backend in self.backends]
        for arm in (self.choose.a, self.choose.b):
            if arm.split(" · ")[0] not in names:
                raise ValueError(f"choose: {arm!r} names no backend; allowed: {names}")
        if self.choose.a == self.choose.b:
            raise ValueError("choose: a and b name the same backend")
        return self

    def resolved_output_dir(self) -> Path:
        """`output_dir`, or `runs/<name>`."""
        return self.output_dir or Path("runs") / self.name
