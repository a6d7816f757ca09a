"""AgentLab step info and summaries -> looplab traces, one run per file.

Accepted (learned from ServiceNow/AgentLab `src/agentlab/experiments/loop.py`: `StepInfo`,
`StepTimestamps`, `save_step_info(save_json=True)`, `save_summary_info`):

- **step info**: a `StepInfo` as JSON (`steps_info.json`), a list of them, or one per
  line: `step`, `action`, `stats` (`input_tokens`, `output_tokens` from the LLM tracker),
  and `profiling` (epoch seconds, measured): `env_start`/`env_stop` around `env.step`
  (or `env.reset` for step 0), inside it `action_exec_start`/`action_exec_stop`,
  `wait_for_page_loading_start`/`_stop`, `validation_start`/`_stop`,
  `get_observation_start`/`_stop`; then `agent_start`/`agent_stop` around the agent's
  `get_action`. StepInfo k holds the env step of action k-1 and the agent call of step k.
  (AgentLab's `step_*.pkl.gz` are pickles, never loaded here: dump them to JSON first.)
- **summary**: `summary_info.json`: `n_steps`, `stats.cum_agent_elapsed`,
  `stats.cum_step_elapsed`, `stats.cum_input_tokens`, `stats.cum_output_tokens`, ... No
  per-step values: each step gets an equal share (estimated).

Step k here: the agent call of StepInfo k (model, measured) and the env step of StepInfo
k+1 (the browser's action, page-load wait, validation and observation: one tool call,
measured, its parts summed in the run's notes). StepInfo 0's env step is the reset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.end_reason import EndReason
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import as_float, as_int, as_str, json_records, obj

__all__ = ["AgentLabImporter", "import_agentlab"]

FORMAT = "agentlab"
_PARTS = ("action_exec", "wait_for_page_loading", "validation", "get_observation")
_ABSENT = ("sent", "first_token", "last_token", "cached_tokens")
_SHARE = "an equal share of summary_info's total over n_steps"


def import_agentlab(path: Path) -> list[ImportedRun]:
    """Import AgentLab step info (JSON, list or lines) or a `summary_info.json`.

    Raises:
        TraceError: neither step infos with `profiling` nor a summary with `n_steps`.
    """
    records = [r for _, r in json_records(path)]
    if len(records) == 1 and isinstance(records[0], list):
        records = records[0]
    infos = [obj(r) for r in records]
    run = path.parent.name or path.stem
    draft = RunDraft(fmt=FORMAT, run_id=run, source_path=path, task=run, agent="AgentLab")
    if len(infos) == 1 and "n_steps" in infos[0]:
        _summary(draft, infos[0])
    elif infos and all("profiling" in i for i in infos):
        _step_infos(draft, sorted(infos, key=lambda i: as_int(i.get("step")) or 0))
    else:
        raise TraceError(
            "expected AgentLab StepInfo JSON (with `profiling`) or summary_info.json "
            "(with `n_steps`)",
            path=str(path),
        )
    return [build_run(draft)]


def _step_infos(draft: RunDraft, infos: list[dict[str, Any]]) -> None:
    parts = dict.fromkeys(_PARTS, 0.0)
    first = obj(infos[0].get("profiling"))
    start, stop = as_float(first.get("env_start")), as_float(first.get("env_stop"))
    if start is not None and stop is not None:
        draft.sandbox_start_s, draft.sandbox_start_how = stop - start, "StepInfo 0's env reset"
    for index, info in enumerate(infos):
        times = obj(info.get("profiling"))
        if not as_float(times.get("agent_stop")):
            continue  # the terminal StepInfo: an env step, no agent call
        stats = obj(info.get("stats"))
        model = ModelDraft(
            start=as_float(times.get("agent_start")),
            end=as_float(times.get("agent_stop")),
            prompt_tokens=as_int(stats.get("input_tokens")),
            completion_tokens=as_int(stats.get("output_tokens")),
            message={"role": "assistant", "content": as_str(info.get("action"))},
        )
        step = StepDraft(model=model)
        after = obj(infos[index + 1]) if index + 1 < len(infos) else None
        if after is not None:
            step.tools.append(_env_step(info, obj(after.get("profiling")), parts))
        draft.steps.append(step)
    last = infos[-1]
    if last.get("terminated") or last.get("truncated"):
        draft.end_reason = EndReason.TERMINATED if last.get("terminated") else EndReason.TRUNCATED
        draft.success = (as_float(last.get("reward")) or 0.0) > 0
    draft.model_timing = "measured: profiling.agent_start -> agent_stop (the agent's get_action)"
    draft.tool_timing = "measured: the next StepInfo's profiling.env_start -> env_stop"
    draft.notes.append(
        "env steps' parts (s): " + ", ".join(f"{k} {v:.2f}" for k, v in parts.items())
    )
    draft.absent.update(f"model_call.{k}" for k in _ABSENT)


def _env_step(info: dict[str, Any], times: dict[str, Any], parts: dict[str, float]) -> ToolDraft:
    """The env step that ran `info`'s action (its parts added to `parts`)."""
    for part in _PARTS:
        a, b = as_float(times.get(f"{part}_start")), as_float(times.get(f"{part}_stop"))
        if a and b and b >= a:
            parts[part] += b - a
    action = as_str(info.get("action")) or ""
    return ToolDraft(
        name=(action.split("(", 1)[0].strip() or "env_step")[:64],
        start=as_float(times.get("env_start")),
        end=as_float(times.get("env_stop")),
        arguments=action,
    )


def _summary(draft: RunDraft, summary: dict[str, Any]) -> None:
    n = as_int(summary.get("n_steps")) or 0
    agent = as_float(summary.get("stats.cum_agent_elapsed"))
    env = as_float(summary.get("stats.cum_step_elapsed"))
    tokens_in = as_int(summary.get("stats.cum_input_tokens"))
    tokens_out = as_int(summary.get("stats.cum_output_tokens"))
    clock = 0.0
    for _ in range(n):
        model = ModelDraft(start=clock, end=clock + (agent or 0.0) / n)
        model.estimated.update(start="steps laid end to end from 0", end=_SHARE)
        model.prompt_tokens = None if tokens_in is None else round(tokens_in / n)
        model.completion_tokens = None if tokens_out is None else round(tokens_out / n)
        model.estimated.update(prompt_tokens=_SHARE, completion_tokens=_SHARE)
        clock = model.end or clock
        tool = ToolDraft(name="env_step", start=clock, end=clock + (env or 0.0) / n)
        tool.estimated.update(start="after the model call", end=_SHARE)
        clock = tool.end or clock
        draft.steps.append(StepDraft(model=model, tools=[tool]))
    draft.success = bool(summary.get("cum_reward")) if "cum_reward" in summary else None
    draft.end_reason = _end_reason(summary)
    draft.absent.add("wall_time")
    draft.model_timing = "estimated: stats.cum_agent_elapsed (measured total) / n_steps"
    draft.tool_timing = (
        "estimated: stats.cum_step_elapsed (measured total, with the reset) / n_steps"
    )
    draft.notes.append("summary_info.json: per-step values are equal shares of the totals")


def _end_reason(summary: dict[str, Any]) -> EndReason | None:
    if summary.get("err_msg"):
        return EndReason.ERROR
    if summary.get("terminated"):
        return EndReason.TERMINATED
    return EndReason.TRUNCATED if summary.get("truncated") else None


class AgentLabImporter:
    """The registry entry for AgentLab step infos and summaries."""

    name = FORMAT
    expects = (
        "AgentLab StepInfo JSON (steps_info.json, a list or JSON lines: `profiling` with "
        "StepTimestamps, `stats`) or summary_info.json (`n_steps`, `stats.cum_agent_elapsed`)"
    )

    def sniff(self, path: Path) -> bool:
        """`profiling` with `agent_start`, or `n_steps` with `stats.cum_step_elapsed`."""
        head = peek(path)
        return head.has_key("profiling", "agent_start", "env_start") or head.has_key(
            "n_steps", "stats.cum_step_elapsed"
        )

    def load(self, path: Path) -> list[ImportedRun]:
        """One run (see `import_agentlab`)."""
        return import_agentlab(path)
