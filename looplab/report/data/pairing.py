"""The pairing rules: which runs may be compared, in one place.

Runs are grouped by their comparison key, (agent, task set, clock) from the run's
identity (`traces/identity.py`); within a key, runs differ by profile, and only there is
a speedup computed. The rules, each pinned by `tests/report/test_pairing.py`:

1. never pair two agents (a key has one agent);
2. never pool wall-clock with virtual-clock (or recorded) times into one number (a key has
   one clock);
3. never judge one task set (kind of agent work) against another's (a key has one task
   set); the claim check sees each key's own slowest and fastest profile
   (`claim_groups`), and splits its rows by agent and task kind;
4. every headline names the key it stands for (`ComparisonKey.label`);
5. an arm is (model, profile) within a key: two arms of one model at two profiles are a
   speed comparison (a decode-rate change); two arms whose models differ are a model
   comparison, never headlined as a decode-rate change and never fed to the claim check
   as one (`models_differ`; the model prefixes the group label when a key holds two).

`pooled_key` is the guard a pooled number calls: it raises when its runs span two keys.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from looplab.report.data.records import RunRecord
from looplab.traces.identity import RunIdentity, run_identity

__all__ = [
    "ComparisonKey",
    "arm_model",
    "by_profile",
    "claim_groups",
    "comparison_groups",
    "comparison_key",
    "group_prefix",
    "identity_of_record",
    "models_differ",
    "pooled_key",
]

_CLOCK_WORDS = {"wall": "wall clock", "virtual": "virtual clock", "recorded": "recorded times"}


@dataclass(frozen=True, order=True)
class ComparisonKey:
    """What a compared group shares: one agent, one task set, one clock."""

    agent: str
    tasks: str
    clock: str

    @property
    def label(self) -> str:
        """`coding on coding (wall clock)`: how a headline names its group."""
        return f"{self.agent} on {self.tasks} ({_CLOCK_WORDS.get(self.clock, self.clock)})"


def identity_of_record(record: RunRecord) -> RunIdentity:
    """The record's identity (built from its fields when it has none)."""
    if record.identity is not None:
        return record.identity
    return run_identity(
        agent=record.agent,
        task=record.task,
        profile=record.profile,
        decode_tps=record.decode_tps,
        clock=record.clock if record.clock in ("wall", "virtual", "recorded") else "wall",  # type: ignore[arg-type]
    )


def comparison_key(record: RunRecord) -> ComparisonKey:
    """The key a run is compared within."""
    identity = identity_of_record(record)
    return ComparisonKey(identity.agent, identity.tasks, identity.clock)


def arm_model(runs: Sequence[RunRecord]) -> str | None:
    """The one model an arm's runs talked to (None: unknown, or several)."""
    models = {r.model for r in runs}
    return models.pop() if len(models) == 1 else None


def models_differ(a: Sequence[RunRecord], b: Sequence[RunRecord]) -> bool:
    """Whether two arms ran different models (rule 5): the sets of models they name differ
    (one arm's runs re-timed at another profile keep their mix of models: the same set). A
    side whose model is unknown is not a difference."""
    known_a, known_b = {r.model for r in a} - {None}, {r.model for r in b} - {None}
    return bool(known_a and known_b) and known_a != known_b


def comparison_groups(records: Sequence[RunRecord]) -> dict[ComparisonKey, list[RunRecord]]:
    """Runs by comparison key, keys sorted (agent, tasks, clock)."""
    groups: dict[ComparisonKey, list[RunRecord]] = defaultdict(list)
    for record in records:
        groups[comparison_key(record)].append(record)
    return {key: groups[key] for key in sorted(groups)}


def by_profile(runs: Sequence[RunRecord]) -> dict[str, list[RunRecord]]:
    """One key's runs by profile label (`RunRecord.group`, else `profile`), the slowest
    decode rate first (unknown rates last, by name).

    Raises:
        ValueError: the runs span two comparison keys (`pooled_key`).
    """
    pooled_key(runs)
    out: dict[str, list[RunRecord]] = defaultdict(list)
    for run in runs:
        out[run.group or run.profile].append(run)

    def order(label: str) -> tuple[int, float, str]:
        rate = out[label][0].decode_tps
        return (0, rate, label) if rate else (1, 0.0, label)

    return {label: out[label] for label in sorted(out, key=order)}


def pooled_key(runs: Sequence[RunRecord]) -> ComparisonKey | None:
    """The one key `runs` share (None: no runs).

    Raises:
        ValueError: they span two keys: two agents, two task sets or two clocks would be
            pooled into one number.
    """
    keys = sorted({comparison_key(r) for r in runs})
    if len(keys) > 1:
        raise ValueError(
            "refusing to pool runs of different comparison groups into one number: "
            + "; ".join(k.label for k in keys)
        )
    return keys[0] if keys else None


def group_prefix(key: ComparisonKey, keys: Sequence[ComparisonKey]) -> str:
    """What a group label needs to say of its key to be told apart from the other keys
    (`''` when there is one key): the agent, task set and clock where they differ."""
    parts: list[str] = []
    if len({k.agent for k in keys}) > 1:
        parts.append(key.agent)
    if len({k.tasks for k in keys}) > 1 and key.tasks != key.agent:
        parts.append(key.tasks)
    if len({k.clock for k in keys}) > 1:
        parts.append(key.clock)
    return " · ".join(parts)


def claim_groups(
    by_group: dict[str, list[RunRecord]], order: Sequence[str]
) -> tuple[dict[str, list[RunRecord]], list[str]]:
    """The two groups the claim check compares: every key's slowest profile's runs against
    the same key's fastest (keys with one profile left out, and keys whose two arms ran
    different models: rule 5), so a slow run is never set against another agent's, or
    another model's, fast one. Only keys at the most common pair of decode rates
    take part (one ratio per check); with one key, its slowest and fastest groups as they
    are.
    """
    parts: dict[ComparisonKey, list[str]] = {}
    for group in order:
        parts.setdefault(comparison_key(by_group[group][0]), []).append(group)
    if len(parts) <= 1:
        if len(order) >= 2 and models_differ(by_group[order[0]], by_group[order[-1]]):
            return {}, []
        return by_group, list(order)
    pairs = [
        (p[0], p[-1])
        for p in parts.values()
        if len(p) >= 2 and not models_differ(by_group[p[0]], by_group[p[-1]])
    ]
    if not pairs:
        return {}, []
    rates = [(by_group[s][0].decode_tps, by_group[f][0].decode_tps) for s, f in pairs]
    common = max(set(rates), key=rates.count)
    chosen = [pair for pair, rate in zip(pairs, rates, strict=True) if rate == common]
    slow_names = {by_group[s][0].profile for s, _ in chosen}
    fast_names = {by_group[f][0].profile for _, f in chosen}
    slow = slow_names.pop() if len(slow_names) == 1 else "slowest"
    fast = fast_names.pop() if len(fast_names) == 1 else "fastest"
    if slow == fast:
        slow, fast = f"{slow} (slowest)", f"{fast} (fastest)"
    merged = {
        slow: [r for s, _ in chosen for r in by_group[s]],
        fast: [r for _, f in chosen for r in by_group[f]],
    }
    return merged, [slow, fast]
