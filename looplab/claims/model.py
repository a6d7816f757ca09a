"""A claim entry: one YAML file in `entries/`, validated into `ClaimEntry`.

An entry records what was published (source, date, the sentence, the number and band, the
stated conditions) apart from how the lab tests it (`test`): which evidence method
(`looplab.claims.evidence.METHODS`), over which shipped data, with which slow and fast knob
values (`looplab.claims.knobs.KNOBS`). Bad entries raise `ConfigError` naming the file, the
line and the field (the same validation as every looplab config).
"""

from __future__ import annotations

import datetime as dt
import functools
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from looplab.claims.knobs import KNOBS
from looplab.config import StrictModel, load_model
from looplab.errors import ConfigError

__all__ = [
    "ENTRY_DIR",
    "BreakEven",
    "ClaimEntry",
    "Claimed",
    "Conditions",
    "Implied",
    "PanelText",
    "PublishedArm",
    "Source",
    "TestPlan",
    "WorkedExample",
    "claim_entries",
    "get_claim",
    "load_claim",
    "load_claims",
]

ENTRY_DIR = Path(__file__).with_name("entries")
"""Where the shipped entries live: `<name>.yaml`, the file name being the entry's name."""

Measure = Literal["shorter", "speedup", "seconds"]


class Source(StrictModel):
    """Where the claim was published."""

    title: str = Field(min_length=1)
    """The publication's title (or a description of the press reports)."""
    url: str | None = None
    """Its address; None when the lab's notes do not record one (never a guessed address)."""
    date: dt.date | None = None
    """Publication date."""
    primary: bool = True
    """False for second-hand reports (press) with no primary source found."""


class Claimed(StrictModel):
    """The number claimed, as a band in one measure."""

    text: str = Field(min_length=1)
    """The claim in words (`40-60% shorter`)."""
    measure: Measure
    """`shorter` (fraction of the slow time saved, 0..1), `speedup` (slow / fast, x) or
    `seconds` (the fast side's task time)."""
    low: float
    """Lower end of the band (equal to `high` for a point claim)."""
    high: float
    """Upper end of the band."""
    point: float | None = None
    """The headline number inside the band (`about 6x`), if the source gives one."""
    up_to: bool = False
    """An "up to" claim: `high` is a best case, anything up to it is consistent."""
    metric: Literal["task", "ttft"] = "task"
    """What is timed: the whole task, or TTFT (summed over the task's calls)."""

    @model_validator(mode="after")
    def _ordered(self) -> Claimed:
        if self.low > self.high:
            raise ValueError(f"low ({self.low}) is above high ({self.high})")
        if self.measure == "shorter" and not 0 <= self.low <= self.high < 1:
            raise ValueError("a 'shorter' band is a fraction in 0..1 (0.4 for 40%)")
        return self


class Conditions(StrictModel):
    """The conditions the publication states (free text; `not stated` where it is silent)."""

    model: str = "not stated"
    """The model(s) on each side."""
    harness: str = "not stated"
    """The agent or harness."""
    rates: str = "not stated"
    """Decode rates, slow and fast."""
    ttft: str = "not stated"
    """Time to first token."""
    overhead: str = "not stated"
    """Per-call API or transport overhead."""
    workload: str = "not stated"
    """Tasks or benchmark."""
    steps: str = "not stated"
    """Steps or tool calls per task."""


def _known_knob(knob: str) -> str:
    if knob not in KNOBS:
        raise ValueError(f"unknown knob {knob!r}; allowed: {', '.join(KNOBS)}")
    return knob


KnobName = Annotated[str, AfterValidator(_known_knob)]
"""A key of `KNOBS` (an entry naming another is refused with the allowed names)."""


class Implied(StrictModel):
    """What an untestable claim implies: the slow value of one knob that, cut by the
    claimed fraction, would give the claimed gain (`looplab.claims.implied`)."""

    knob: KnobName
    """The knob solved for (a key of `KNOBS`, e.g. `overhead_s`)."""
    cut: float = Field(gt=0, lt=1)
    """The claimed cut of that knob (0.8: -80%)."""
    up_to: float = Field(default=60.0, gt=0)
    """The largest slow value searched."""


class BreakEven(StrictModel):
    """An assumed parameter that decides the verdict: the lab searches the value where the
    verdict changes (`looplab.claims.breakeven`) and prints it next to the assumption."""

    knob: KnobName
    """The knob searched (a key of `KNOBS`), set on both sides."""
    label: str = Field(min_length=1)
    """The parameter in words (`hidden reasoning`)."""
    unit: str = ""
    """The unit it is shown in (`tokens per step`)."""
    per_unit: float = Field(default=1.0, gt=0)
    """Shown value per knob unit (knob 1.0 = 300 tokens per step: 300)."""
    assumed: float = Field(ge=0)
    """The knob value the entry assumes."""
    low: float = Field(default=0.0, ge=0)
    """The smallest knob value searched."""
    high: float = Field(default=10.0, gt=0)
    """The largest knob value searched."""


class WorkedExample(StrictModel):
    """`worked-example`: a source's own arithmetic, as one task of identical model calls."""

    calls: int = Field(ge=1)
    """Model calls in the task (one after another, no tools)."""
    output_tokens: int = Field(ge=1)
    """Output tokens of each call."""


class PublishedArm(StrictModel):
    """`published-outcomes`: one arm's published per-task outcome (an agent + model)."""

    name: str = Field(min_length=1)
    """The arm as the source names it (`Codex CLI + GPT-5`)."""
    success: float = Field(ge=0, le=1)
    """Share of tasks solved (0.574 for 57.4%)."""
    time_s: float | None = Field(default=None, gt=0)
    """Mean time per task attempt in seconds (None: not published)."""
    cost_usd: float | None = Field(default=None, ge=0)
    """Mean cost per task attempt in US dollars (None: not published)."""


class TestPlan(StrictModel):
    """How the lab tests the claim."""

    __test__ = False  # not a pytest class, whatever its name says

    method: str = Field(min_length=1)
    """An evidence method: a key of `looplab.claims.evidence.METHODS`."""
    workload: str | None = None
    """`workload-retime`: a shipped workload (`tasks/workload/<name>`)."""
    harness: str | None = None
    """`corpus-retime`: only the corpus runs of this harness (None: every timed run)."""
    draws: int = Field(default=30, ge=1, le=500)
    """`workload-retime`: seeded draws (seeds 0..draws-1)."""
    base: str = "slow-80"
    """The latency preset every knob value is applied on (prefill curve, jitter means)."""
    slow: dict[str, float] = Field(default_factory=dict)
    """Knob values of the slow side (`looplab.claims.knobs.KNOBS`; unset: the neutral)."""
    fast: dict[str, float] = Field(default_factory=dict)
    """Knob values of the fast side (unset: the slow side's)."""
    decompose: bool = False
    """Take the difference apart into its factors (exact Shapley values)."""
    reason: str | None = None
    """`not-testable`: why, and what the lab lacks."""
    implied: Implied | None = None
    """`not-testable` with a `workload`: solve for what the claim implies instead."""
    example: WorkedExample | None = None
    """`worked-example`: the task the source's arithmetic describes."""
    workloads: list[str] = Field(default_factory=list)
    """`corpus-retime`: shipped workloads re-timed beside the corpus, each its own group
    (row) of `draws` draws."""
    break_even: BreakEven | None = None
    """An assumed parameter the verdict turns on: print where the verdict changes."""
    arms: list[PublishedArm] = Field(default_factory=list)
    """`published-outcomes`: the two arms, the faster first (`looplab.claims.outcomes`)."""
    tries: int = Field(default=3, ge=1, le=10)
    """`published-outcomes`: most tries of a retrying policy (k)."""

    @field_validator("slow", "fast")
    @classmethod
    def _known_knobs(cls, values: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(values) - set(KNOBS))
        if unknown:
            raise ValueError(f"unknown knob(s) {unknown}; allowed: {', '.join(KNOBS)}")
        return values


class PanelText(StrictModel):
    """How the report's claim panel words a claim it shows (`report.claims.rows.panel_claims`);
    the panel reads its rows as percent shorter, so only a `shorter` claim has one."""

    label: str = Field(min_length=1)
    """The claim as the panel's claim row and sentences quote it."""
    source: str = Field(min_length=1)
    """The source as the panel names it."""


class ClaimEntry(StrictModel):
    """One published claim and how the lab tests it."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    """Short name (the file's stem): `looplab claims check <name>`."""
    title: str = Field(min_length=1)
    """One line for listings."""
    source: Source
    """Where it was published."""
    quote: str = Field(min_length=1)
    """The sentence, verbatim or as the lab's notes paraphrase it (`quote_kind`)."""
    quote_kind: Literal["verbatim", "paraphrase"] = "paraphrase"
    """Whether `quote` is the publication's own wording."""
    claimed: Claimed
    """The number and band."""
    conditions: Conditions = Field(default_factory=Conditions)
    """What the publication says about its setting."""
    test: TestPlan
    """How the lab tests it."""
    assumptions: list[str] = Field(default_factory=list)
    """What the lab's test rests on that the publication does not say."""
    panel: PanelText | None = None
    """Shown as a claim row of the report's claim check (the seeds' claims), so worded."""

    @model_validator(mode="after")
    def _panel_is_shorter(self) -> ClaimEntry:
        if self.panel is not None and self.claimed.measure != "shorter":
            raise ValueError(
                f"a panel wording needs a 'shorter' claim (the panel's rows are percent "
                f"shorter); this one's measure is {self.claimed.measure!r}"
            )
        return self


def load_claim(path: Path) -> ClaimEntry:
    """One entry file, validated.

    Raises:
        ConfigError: unreadable YAML, a field that fails validation (file, line, field), or
            a `name` other than the file's stem.
    """
    entry = load_model(ClaimEntry, path)
    if entry.name != path.stem:
        raise ConfigError(
            f"the entry is named {entry.name!r} but its file is {path.name}",
            source=str(path),
            field="name",
        )
    return entry


def load_claims(folder: Path) -> dict[str, ClaimEntry]:
    """Every `*.yaml` entry of `folder` by name, in file-name order (`load_claim` raises)."""
    return {path.stem: load_claim(path) for path in sorted(folder.glob("*.yaml"))}


@functools.cache
def claim_entries() -> dict[str, ClaimEntry]:
    """The shipped entries (`ENTRY_DIR`), read once per process."""
    return load_claims(ENTRY_DIR)


def get_claim(name: str) -> ClaimEntry:
    """The shipped entry `name`.

    Raises:
        ConfigError: no such entry (the message lists the names).
    """
    entries = claim_entries()
    if name not in entries:
        raise ConfigError(
            f"unknown claim {name!r}", field="NAME", allowed=list(entries), given=name
        )
    return entries[name]
