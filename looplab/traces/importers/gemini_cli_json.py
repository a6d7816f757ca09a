"""Gemini CLI's headless output (`gemini -p ... --output-format json`) -> one run of totals.

Field names: Gemini CLI's headless-mode docs (google-gemini/gemini-cli
`docs/cli/headless.md`) and a public output read 2026-12: `response`, `error`, and
`stats.models.<model>` with `api` (`totalRequests`, `totalErrors`, `totalLatencyMs`) and
`tokens` (`prompt` or `input`, `candidates`, `cached`, `thoughts`, `tool`, `total`);
`stats.tools` (`totalCalls`, `totalDurationMs`, `byName.<tool>`: `count`, `success`,
`fail`, `durationMs`).

The file holds totals, never a call: every call here is ESTIMATED, and each field says
how. A model's `totalRequests` calls each take an equal share of its `totalLatencyMs`
and of its tokens (prompt = `prompt`, which includes the cached; completion =
`candidates` + `thoughts`, reasoning = `thoughts`; remainders on its last call), models in
the order the file lists them. A tool's calls each take an equal share of its
`durationMs`, dealt to the model calls in turn (the last call answers). No wall-clock
times: items are laid end to end from 0, and the harness's own time is absent. The
verdict is absent; an `error` is the run's error.
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
from looplab.traces.importers.source import (
    BadValue,
    as_float,
    as_int,
    as_str,
    load_json,
    obj,
    safe_run_id,
)

__all__ = ["GeminiCliJsonImporter", "import_gemini_cli_json"]

FORMAT = "gemini-cli-json"
_SHARE = "an equal share of the model's totals (stats.models: totals only)"
_LAID = "laid end to end from 0 (the file has no times)"
MAX_CALLS = 100_000
"""Most calls one count may stand for (a larger `totalRequests` / `count` is damage)."""


def import_gemini_cli_json(path: Path) -> list[ImportedRun]:
    """Import one headless run's JSON output (module docstring).

    Raises:
        TraceError: no `stats.models` with requests in it.
    """
    data = obj(load_json(path))
    models = obj(obj(data.get("stats")).get("models"))
    calls = [call for name, stats in models.items() for call in _calls(name, obj(stats))]
    if not calls:
        raise TraceError(
            "no stats.models.<model>.api.totalRequests (no model call)", path=str(path)
        )
    tools = _tools(obj(obj(data.get("stats")).get("tools")))
    draft = RunDraft(
        fmt=FORMAT,
        run_id=safe_run_id("gemini-cli", path.stem),
        source_path=path,
        agent="gemini-cli",
        prompt=None,
    )
    clock = 0.0
    answering = max(len(calls) - 1, 1)
    for index, (call, duration) in enumerate(calls):
        call.start, call.end = clock, clock + duration
        clock = call.end
        step = StepDraft(model=call)
        for tool, length in tools[index::answering] if index < answering else []:
            tool.start, tool.end = clock, clock + length
            clock = tool.end
            step.tools.append(tool)
        draft.steps.append(step)
    error = data.get("error")
    if error:
        draft.error = as_str(obj(error).get("message")) or as_str(error) or "error"
        draft.end_reason = EndReason.ERROR
    draft.end_time = clock
    draft.model_timing = f"estimated: {_SHARE} of totalLatencyMs, {_LAID}"
    draft.tool_timing = "estimated: an equal share of each tool's durationMs" if tools else "absent"
    draft.absent.update({"wall_time", "model_call.first_token", "model_call.last_token"})
    draft.notes.append(
        "totals only (--output-format json stats): every call's time and tokens are equal "
        "shares, ESTIMATED; the harness's own time is absent"
    )
    return [build_run(draft)]


def _calls(model: str, stats: dict[str, Any]) -> list[tuple[ModelDraft, float]]:
    api, tokens = obj(stats.get("api")), obj(stats.get("tokens"))
    n = _bounded(as_int(api.get("totalRequests")), f"stats.models.{model}.api.totalRequests")
    if n <= 0:
        return []
    latency = (as_float(api.get("totalLatencyMs")) or 0.0) / 1000.0
    prompt = as_int(tokens.get("prompt", tokens.get("input")))
    cached = as_int(tokens.get("cached"))
    thoughts = as_int(tokens.get("thoughts"))
    candidates = as_int(tokens.get("candidates"))
    completion = None if candidates is None else candidates + (thoughts or 0)
    out: list[tuple[ModelDraft, float]] = []
    for k in range(n):
        call = ModelDraft(
            model=model,
            prompt_tokens=_share(prompt, n, k),
            cached_tokens=_share(cached, n, k),
            completion_tokens=_share(completion, n, k),
            reasoning_tokens=_share(thoughts, n, k),
        )
        call.estimated.update(
            {
                "start": _LAID,
                "end": f"start plus {_SHARE} of totalLatencyMs",
                "prompt_tokens": _SHARE,
                "cached_tokens": _SHARE,
                "completion_tokens": _SHARE,
                "reasoning_tokens": _SHARE,
            }
        )
        out.append((call, latency / n))
    return out


def _bounded(value: int | None, where: str) -> int:
    """A call count in 0..`MAX_CALLS` (None: 0).

    Raises:
        BadValue: a count past `MAX_CALLS` (named).
    """
    if value is not None and value > MAX_CALLS:
        raise BadValue(f"{where}: {value} calls is past {MAX_CALLS}")
    return max(value or 0, 0)


def _share(total: int | None, n: int, k: int) -> int | None:
    """Call k's share of `total` over n calls (the remainder on the last)."""
    if total is None:
        return None
    base = total // n
    return base + (total - base * n if k == n - 1 else 0)


def _tools(stats: dict[str, Any]) -> list[tuple[ToolDraft, float]]:
    out: list[tuple[ToolDraft, float]] = []
    for name, row in obj(stats.get("byName")).items():
        entry = obj(row)
        count = _bounded(as_int(entry.get("count")), f"stats.tools.byName.{name}.count")
        total = (as_float(entry.get("durationMs")) or 0.0) / 1000.0
        for _ in range(count):
            tool = ToolDraft(name=str(name))
            tool.estimated.update(
                {"start": _LAID, "end": "start plus an equal share of the tool's durationMs"}
            )
            out.append((tool, total / count))
    return out


class GeminiCliJsonImporter:
    """The registry entry for Gemini CLI's headless JSON output."""

    name = FORMAT
    expects = (
        "Gemini CLI's `--output-format json` output (`response`, `stats.models.<model>.api."
        "totalRequests/totalLatencyMs`, `.tokens`, `stats.tools.byName`)"
    )

    def sniff(self, path: Path) -> bool:
        """`stats` with `models` and `totalRequests` in an object."""
        head = peek(path)
        return head.start == "{" and head.has_key("stats", "models", "totalRequests")

    def load(self, path: Path) -> list[ImportedRun]:
        """One run (see `import_gemini_cli_json`)."""
        return import_gemini_cli_json(path)
