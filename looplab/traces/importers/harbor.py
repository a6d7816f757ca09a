"""Harbor trial directories (`result.json` + the agent's ATIF trajectory) -> one run each.

Accepted: a Harbor trial's `result.json` (a `TrialResult`), read with what lies beside it.
Field names: Harbor's source (`src/harbor/models/trial/result.py`, `paths.py`, read
2026-12 in a public fork, UniPat-AI/harbor_multiturn; the upstream repository was not in
the index): `task_name`, `trial_name`, `agent_info` (`name`, `version`, `model_info`
`name` / `provider`), `agent_result` (`n_input_tokens`, `n_cache_tokens`,
`n_output_tokens`), `verifier_result.rewards` (name -> value), `exception_info`
(`exception_type`, `exception_message`), and the phases `environment_setup`,
`agent_setup`, `agent_execution`, `verifier` (each `started_at` / `finished_at`, ISO).
Beside it: `agent/trajectory.json` (ATIF, any of v1.0-v1.8: read by the ATIF importer,
`trajectory_draft`), `verifier/reward.txt` or `reward.json` when `verifier_result` is
missing, and a `timing.json` with `env_setup`, `agent_setup`, `agent_execution`,
`verifier`, `total` (each `{started_at, finished_at}` or seconds) where a Harbor version
writes one: only a secondary source (the issue that asked for this importer) names that
file; no Harbor source read here writes it, so it is read when present, never required.

The run: the trajectory's model and tool calls (timed as the ATIF importer says:
ESTIMATED from step timestamps unless looplab wrote it), with the trial's phases as
sandbox operations (`env_setup` and `agent_setup` in a step before the agent's first,
`verifier` in one after its last; MEASURED: their start and finish stamps). The verdict
is the verifier's: the `reward` value (else the first), success when it is 1 or more
(full marks; a partial reward is a failure, its value in the check output). An exception
is the run's error and end reason. A trial without a trajectory keeps its phases only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.end_reason import EndReason
from looplab.traces.importers.atif import trajectory_draft
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import RunDraft, SandboxDraft, StepDraft
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import (
    as_float,
    as_int,
    as_str,
    dig,
    json_records,
    load_json,
    obj,
    parse_time,
    safe_run_id,
)

__all__ = ["HarborImporter", "import_harbor"]

FORMAT = "harbor"
_PHASES = {
    "env_setup": "environment_setup",
    "agent_setup": "agent_setup",
    "agent_execution": "agent_execution",
    "verifier": "verifier",
}
"""Phase name -> its key in result.json (timing.json uses the phase names)."""


def import_harbor(path: Path) -> list[ImportedRun]:
    """Import one Harbor trial from its `result.json` (module docstring).

    Raises:
        TraceError: not a Harbor TrialResult (`trial_name`, `agent_info`), or a
            trajectory that is not ATIF (named).
    """
    result = load_json(path)
    if not isinstance(result, dict) or "trial_name" not in result or "agent_info" not in result:
        raise TraceError(
            "not a Harbor trial result (expected trial_name, agent_info)", path=str(path)
        )
    trial = path.parent
    draft = _trajectory(trial / "agent" / "trajectory.json") or RunDraft(
        fmt=FORMAT, run_id="", source_path=path
    )
    draft.fmt, draft.source_path = FORMAT, path
    draft.run_id = safe_run_id(as_str(result.get("trial_name")) or trial.name)
    agent = obj(result.get("agent_info"))
    name, version = as_str(agent.get("name")), as_str(agent.get("version"))
    draft.agent = f"{name} {version}" if name and version else name or draft.agent
    draft.model = as_str(dig(agent, "model_info", "name")) or draft.model
    draft.task = as_str(result.get("task_name")) or draft.task
    _phases(draft, result, trial / "timing.json", path)
    _verdict(draft, result, trial / "verifier")
    _totals(draft, obj(result.get("agent_result")))
    return [build_run(draft)]


def _trajectory(path: Path) -> RunDraft | None:
    if not path.is_file():
        return None
    records = json_records(path)
    if not records or not isinstance(records[0][1], dict):
        raise TraceError("agent/trajectory.json: not an ATIF trajectory", path=str(path))
    return trajectory_draft(records[0][1], path, "0")


def _phases(draft: RunDraft, result: dict[str, Any], timing: Path, path: Path) -> None:
    """The trial's phases as sandbox operations around the agent's steps."""
    spans: dict[str, tuple[float, float]] = {}
    extra = obj(load_json(timing)) if timing.is_file() else {}
    for phase, key in _PHASES.items():
        value = obj(result.get(key)) or obj(extra.get(phase))
        start, end = value.get("started_at"), value.get("finished_at")
        if start is not None and end is not None:
            spans[phase] = (
                parse_time(start, f"{key}.started_at", path),
                parse_time(end, f"{key}.finished_at", path),
            )
    if not spans:
        draft.absent.add("sandbox.phases")
        draft.notes.append("no trial phases (environment_setup ... verifier) in result.json")
        return
    before = [_op(p, spans[p]) for p in ("env_setup", "agent_setup") if p in spans]
    after = [_op("verifier", spans["verifier"])] if "verifier" in spans else []
    if before:
        draft.steps.insert(0, StepDraft(sandbox=before))
        for sub in draft.subruns:
            if sub.parent is None:
                sub.parent_step = None if sub.parent_step is None else sub.parent_step + 1
                sub.join_step = None if sub.join_step is None else sub.join_step + 1
    if after:
        draft.steps.append(StepDraft(sandbox=after))
    if "env_setup" in spans:
        start, end = spans["env_setup"]
        draft.sandbox_start_s, draft.sandbox_start_how = end - start, "Harbor environment_setup"
    shown = ", ".join(f"{p} {b - a:.1f} s" for p, (a, b) in spans.items())
    draft.notes.append(f"trial phases (measured: their start/finish stamps): {shown}")
    if "agent_execution" in spans:
        draft.end_time = max(draft.end_time or 0.0, spans["agent_execution"][1])
    if after:
        draft.end_time = max(draft.end_time or 0.0, spans["verifier"][1])


def _op(phase: str, span: tuple[float, float]) -> SandboxDraft:
    return SandboxDraft(op=phase, start=span[0], end=span[1], detail=f"Harbor trial {phase}")


def _verdict(draft: RunDraft, result: dict[str, Any], verifier: Path) -> None:
    rewards = obj(dig(result, "verifier_result", "rewards"))
    if not rewards:
        rewards = _reward_files(verifier)
    exception = obj(result.get("exception_info"))
    if exception:
        kind = as_str(exception.get("exception_type")) or "exception"
        draft.error = f"{kind}: {as_str(exception.get('exception_message')) or ''}".strip()
        draft.end_reason = kind
    if rewards:
        key = "reward" if "reward" in rewards else next(iter(rewards))
        value = as_float(rewards[key])
        if value is not None:
            draft.success = value >= 1.0
            draft.check_output = ", ".join(f"{k} {v}" for k, v in rewards.items())
            draft.end_reason = draft.end_reason or EndReason.VERIFIED
            draft.notes.append(f"verdict: the verifier's {key} = {value:g}")
    if draft.success is None:
        draft.notes.append("no verifier reward: verdict absent")


def _reward_files(verifier: Path) -> dict[str, Any]:
    """`verifier/reward.json` (name -> value) or `reward.txt` (one float), else {}."""
    as_json = verifier / "reward.json"
    if as_json.is_file():
        return obj(load_json(as_json))
    as_text = verifier / "reward.txt"
    if as_text.is_file():
        try:
            return {"reward": float(as_text.read_text().strip())}
        except ValueError:
            return {}
    return {}


def _totals(draft: RunDraft, agent_result: dict[str, Any]) -> None:
    """Harbor's own token totals, for a cross-check in the notes."""
    totals = [as_int(agent_result.get(k)) for k in ("n_input_tokens", "n_cache_tokens")]
    totals.append(as_int(agent_result.get("n_output_tokens")))
    if any(t is not None for t in totals):
        shown = "/".join("?" if t is None else str(t) for t in totals)
        draft.notes.append(f"Harbor's totals (input/cache/output tokens): {shown}")


class HarborImporter:
    """The registry entry for Harbor trials."""

    name = FORMAT
    expects = (
        "a Harbor trial's result.json (`trial_name`, `agent_info`, `verifier_result`, "
        "phase timings), read with the trial's agent/trajectory.json (ATIF) beside it"
    )

    def sniff(self, path: Path) -> bool:
        """`trial_name` and `agent_info` in an object."""
        head = peek(path)
        return head.start == "{" and head.has_key("trial_name", "agent_info")

    def load(self, path: Path) -> list[ImportedRun]:
        """One run (see `import_harbor`)."""
        return import_harbor(path)
