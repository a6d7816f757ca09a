"""The workload model file (`looplab-workload-1`): what a kind of agent's tasks look like.

A workload model is a YAML file (`looplab calibrate` writes one from traces; people may
write or edit one by hand). It holds one distribution per parameter and, for EACH
parameter, its provenance: whether the values it was fitted from were measured,
estimated (and how) or absent, and which traces they came from.

```yaml
format: looplab-workload-1
name: mini-swe-agent-deepseek
description: mini-swe-agent 2.x with DeepSeek-chat on SWE-bench instances
fitted_from: {traces: [pvlib__pvlib-python-1072, ...], sources: [import:mini-swe-agent], ...}
parameters:
  steps:                 # per task
    distribution: {kind: categorical, values: [12, 31, 59], weights: [1, 1, 1]}
    provenance: {status: measured, observations: 3, traces: [...]}
  output_tokens: ...     # per step, visible
  reasoning_tokens: ...  # per step, hidden (absent: the latency profile decides)
  initial_prompt_tokens: ...   # the first call's prompt
  new_prompt_tokens: ...       # per later step: prompt growth since the previous call
  cached_share: ...            # per later step: share of the prompt served from cache
  tool_calls: ...        # per step
  tool_names: {weights: {bash: 1.0}, provenance: ...}
  tool_s: ...            # per tool call, seconds (heavy-tailed)
  other_s: ...           # per step, harness/other seconds
  observation_s: ...     # optional, per action: page-load wait + observation capture
  observation_tokens: ...  # optional, per action: tokens of the new observation (never cached)
  position_factors: {every: 3, factors: [...], provenance: ...}  # optional: later actions slower
  planner: {output_tokens: ..., reasoning_tokens: ...}     # optional: a call before each action
  reflection: {output_tokens: ..., reasoning_tokens: ...}  # optional: a call after each action
  initial_cached_share: ...  # optional: share of the first call's prompt served from cache
  fanout: {probability: 0.1, count: ..., steps: ..., provenance: ...}  # optional: sub-agents
```

`initial_cached_share` and `fanout` describe 2026 coding agents: a first prompt whose
system prompt and tools are cached across sessions, and steps that spawn sub-agents
(each its own conversation of drawn steps) running concurrently with the step's tools.

The three optional parts describe computer-use agents: a step is then one ACTION, played
as up to three model calls (planner, actor, reflection; `looplab.workloads.sample`), and
the actor's tool call is followed by the observation time (the browser waiting for the
page and capturing the screenshot or DOM), apart from the action's own tool time.
Workloads without them are read and drawn exactly as before.

Units: token counts are tokens of the source's tokenizer; times are seconds.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, model_validator

from looplab.config import StrictModel, load_model
from looplab.distributions import WorkloadDistribution

__all__ = [
    "WORKLOAD_FORMAT",
    "CallParameters",
    "FanoutParameters",
    "FittedFrom",
    "Parameter",
    "PositionFactors",
    "Provenance",
    "ToolNames",
    "WorkloadModel",
    "WorkloadParameters",
    "dump_workload",
    "load_workload",
]

WORKLOAD_FORMAT = "looplab-workload-1"
"""The current workload model format tag."""


class Provenance(StrictModel):
    """Where a parameter's values came from."""

    status: Literal["measured", "estimated", "absent"]
    """`measured`: every observation was measured by its source; `estimated`: some were
    derived (see `how`); `absent`: no trace had the value (the distribution is None or
    written by hand)."""
    how: list[str] = Field(default_factory=list)
    """How estimated values were derived (the traces' own notes), or why it is absent."""
    observations: int = Field(default=0, ge=0)
    """Number of values the distribution was fitted from."""
    estimated: int = Field(default=0, ge=0)
    """How many of those were estimated."""
    traces: list[str] = Field(default_factory=list)
    """Run ids of the traces the values came from."""


class Parameter(StrictModel):
    """One parameter: its distribution and its provenance."""

    distribution: WorkloadDistribution | None = None
    """The fitted (or hand-written) distribution; None when absent."""
    provenance: Provenance
    """Measured, estimated or absent, and the source traces."""

    @model_validator(mode="after")
    def _absent_has_none(self) -> Parameter:
        if self.distribution is None and self.provenance.status != "absent":
            raise ValueError("a parameter without a distribution must have status 'absent'")
        return self


class ToolNames(StrictModel):
    """Which tools are called, by weight (recorded names, as OpenAI function names)."""

    weights: dict[str, float] = Field(default_factory=dict)
    """Tool name -> relative frequency."""
    provenance: Provenance
    """Where the counts came from."""

    @model_validator(mode="after")
    def _positive(self) -> ToolNames:
        if any(w <= 0 for w in self.weights.values()):
            raise ValueError("tool weights must be positive")
        return self


class PositionFactors(StrictModel):
    """Multipliers of an action's tool and observation time by its position in the task
    (real browser agents' later steps take longer: bigger pages, longer histories)."""

    every: int = Field(ge=1)
    """Actions per band: band k holds actions k*every .. (k+1)*every - 1."""
    factors: list[float] = Field(min_length=1)
    """One multiplier per band; the last one holds for every later action."""
    provenance: Provenance
    """Where the factors came from."""

    @model_validator(mode="after")
    def _positive(self) -> PositionFactors:
        if any(f <= 0 for f in self.factors):
            raise ValueError("position factors must be positive")
        return self

    def factor(self, index: int) -> float:
        """The multiplier of action `index` (0-based)."""
        return self.factors[min(index // self.every, len(self.factors) - 1)]


class CallParameters(StrictModel):
    """An extra model call per action (a planner's or a reflection's)."""

    output_tokens: Parameter
    """Its visible output tokens."""
    reasoning_tokens: Parameter
    """Its hidden reasoning tokens (absent: the latency profile's draw decides)."""


class FanoutParameters(StrictModel):
    """Sub-agent fan-out: which steps spawn sub-agents, how many, how long each runs."""

    probability: float = Field(ge=0, le=1)
    """Per step (the last excepted): chance that the step spawns sub-agents."""
    count: Parameter
    """Sub-agents a spawning step starts (at least one), run concurrently."""
    steps: Parameter
    """Steps (model calls) of each sub-agent (at least one); their tokens, tools and
    times are drawn from the workload's per-step parameters."""
    provenance: Provenance
    """Where the probability came from."""


class WorkloadParameters(StrictModel):
    """Every parameter of a workload (per task, per step or per tool call)."""

    steps: Parameter
    """Steps (model calls) per task."""
    output_tokens: Parameter
    """Visible output tokens per step (text and tool calls)."""
    reasoning_tokens: Parameter
    """Hidden reasoning tokens per step; absent: the latency profile's draw decides."""
    initial_prompt_tokens: Parameter
    """Prompt tokens of a task's first call (system prompt, tools, task)."""
    new_prompt_tokens: Parameter
    """Per later step: prompt tokens added since the previous call (its reply and the
    tool results); at least the previous reply when drawn."""
    cached_share: Parameter
    """Per later step: share (0..1) of the prompt served from the prefix cache."""
    tool_calls: Parameter
    """Tool calls per step."""
    tool_names: ToolNames
    """Which tools, by frequency."""
    tool_s: Parameter
    """Seconds per tool call (heavy-tailed: an empirical or mixture distribution)."""
    other_s: Parameter
    """Harness/other seconds per step (neither model nor tools)."""
    observation_s: Parameter | None = None
    """Per action (computer use): seconds after the action until the next observation is
    ready (page-load / network-idle wait, screenshot or DOM capture); None: not modelled."""
    observation_tokens: Parameter | None = None
    """Per action (computer use): tokens of the newest observation (a screenshot) that
    every call of the action prefills, the prefix cache stopping before it; None: the
    cached share alone decides."""
    position_factors: PositionFactors | None = None
    """Per action (computer use): tool and observation time multiplied by the action's
    position band's factor (None: the same at every position)."""
    planner: CallParameters | None = None
    """A planner call before each action (its own output and hidden reasoning)."""
    reflection: CallParameters | None = None
    """A reflection call after each action's observation."""
    initial_cached_share: Parameter | None = None
    """Share (0..1) of a task's first prompt served from the prefix cache (system prompt
    and tools cached across sessions); None: the first call has no cache hit."""
    fanout: FanoutParameters | None = None
    """Sub-agents spawned by steps (`FanoutParameters`); None: none."""


class FittedFrom(StrictModel):
    """The traces a model was fitted from."""

    traces: list[str] = Field(default_factory=list)
    """Run ids."""
    sources: list[str] = Field(default_factory=list)
    """Trace sources (`looplab`, `import:mini-swe-agent`, ...)."""
    agents: list[str] = Field(default_factory=list)
    """Agents/harnesses named by the traces."""
    models: list[str] = Field(default_factory=list)
    """Models named by the traces."""
    created: datetime | None = None
    """When the fit was made (UTC)."""


class WorkloadModel(StrictModel):
    """A workload model file (see the module docstring)."""

    format: Literal["looplab-workload-1"] = "looplab-workload-1"
    """Format tag; readers refuse others."""
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.+-]+$")
    """Short name (used in task and cell ids)."""
    description: str = ""
    """What kind of agent and task this stands for."""
    fitted_from: FittedFrom = Field(default_factory=FittedFrom)
    """The traces behind the fit (empty for a hand-written model)."""
    parameters: WorkloadParameters
    """The distributions and their provenance."""
    draws_as: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.+-]+$")
    """Seed draws as the model of this name does (None: this model's `name`): a variant
    that changes only hidden reasoning (drawn from its own stream) then plays the same
    tasks as its base, plus the reasoning, so the two compare pair by pair."""
    notes: list[str] = Field(default_factory=list)
    """Free-form notes (e.g. where the fit is poor)."""


def load_workload(path: Path) -> WorkloadModel:
    """Read and validate a workload model file.

    Raises:
        ConfigError: missing or unreadable file, bad YAML, or a field that does not fit
            (naming the file, line and field).
    """
    return load_model(WorkloadModel, path)


_OPTIONAL_PARTS = (
    "observation_s",
    "observation_tokens",
    "position_factors",
    "planner",
    "reflection",
    "initial_cached_share",
    "fanout",
)
"""Optional parameters a file may leave out (dumped only when set)."""


def dump_workload(model: WorkloadModel) -> str:
    """The model as YAML text (short lists in flow style, fields in schema order)."""
    data = model.model_dump(mode="json", exclude_defaults=False)
    parameters = data["parameters"]
    for optional in _OPTIONAL_PARTS:
        if parameters.get(optional) is None:
            parameters.pop(optional, None)  # files without them read as before
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=100, allow_unicode=True)


class _Dumper(yaml.SafeDumper):
    """Lists of scalars in flow style (`[1, 2, 3]`), everything else in block style."""


def _represent_list(dumper: yaml.SafeDumper, data: list[object]) -> yaml.Node:
    flow = all(not isinstance(item, dict | list) for item in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _represent_list)
