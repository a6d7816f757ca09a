"""Codex sessions (rollout logs) -> looplab traces, one run per session.

Accepted (learned from TraceLab's `example_sessions/codex/trace.json` and the rollouts it
derives from): Codex CLI's rollout log, `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`,
one `{"timestamp", "type", "payload"}` record per line, or TraceLab's readable rendering
(`===== record 0001 =====` blocks). Record types: `session_meta` (`id`, `cli_version`,
`cwd`), `turn_context` (`turn_id`, `model`), `event_msg` (`user_message`, `token_count`
with `info.last_token_usage`: `input_tokens` including `cached_input_tokens`,
`output_tokens` including `reasoning_output_tokens`; `agent_message`, `task_started`,
...), `response_item` (`reasoning`, `message`, `function_call` / `custom_tool_call` with a
`call_id`, and their `*_output`).

Rounds: a round's inputs are the user messages (`event_msg.user_message`) and tool
outputs since the previous round; its outputs are the response items (reasoning,
assistant message, tool calls) up to the `token_count` that reports its usage. Timing:
see `sessions.py`. Tool time: the call record's timestamp -> its output record's. Exit
codes are read from the tool output (`Process exited with code N`, or an older output's
JSON `metadata.exit_code`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.importers.build import build_run
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.sessions import Round, SessionInfo, ToolContent, session_draft
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import as_int, as_str, dig, json_records, obj

__all__ = ["CodexImporter", "import_codex"]

FORMAT = "codex"
_CALLS = {"function_call", "custom_tool_call", "local_shell_call"}
_RESULTS = {"function_call_output", "custom_tool_call_output"}
_EXIT = re.compile(r"(?:Process exited with code|exit code:?)\s*(-?\d+)", re.IGNORECASE)


def import_codex(path: Path) -> list[ImportedRun]:
    """Import a Codex rollout log.

    Returns:
        One run (a rollout is one session).

    Raises:
        TraceError: not JSON, or no Codex records (`type` + `payload`).
    """
    records = json_records(path)
    session = _Session(path)
    for where, record in records:
        if isinstance(record, dict) and isinstance(record.get("payload"), dict):
            session.add(record, where)
    session.close()
    if not session.rounds:
        raise TraceError(
            "no Codex model responses (response_item / token_count records)", path=str(path)
        )
    draft = session_draft(path, session.info, session.rounds, session.content)
    return [build_run(draft)]


class _Session:
    """One rollout's rounds, assembled record by record."""

    def __init__(self, path: Path) -> None:
        stem = path.name.removesuffix(".jsonl").removesuffix(".json")
        self.info = SessionInfo(fmt=FORMAT, session_id=stem, agent="Codex")
        self.rounds: list[Round] = []
        self.open: Round | None = None
        self.inputs: list[dict[str, Any]] = []
        self.content: dict[str, ToolContent] = {}
        self.tools: dict[str, dict[str, Any]] = {}
        self.turn: str | None = None
        self.model: str | None = None
        self.in_turn = 0

    def add(self, record: dict[str, Any], where: str) -> None:
        kind, payload, when = record.get("type"), record["payload"], record.get("timestamp")
        item = as_str(payload.get("type"))
        if kind == "session_meta":
            self._meta(payload)
        elif kind == "turn_context":
            self.turn = as_str(payload.get("turn_id")) or self.turn
            self.model = as_str(payload.get("model")) or self.model
            self.in_turn = 0
        elif kind == "event_msg" and item == "user_message" and when is not None:
            self.info.prompt = self.info.prompt or as_str(payload.get("message"))
            self.inputs.append({"event_type": "user_message", "timestamp": when})
        elif kind == "event_msg" and item == "token_count":
            self._usage(payload, when)
        elif kind == "response_item" and item in _RESULTS and when is not None:
            self._result(payload, when)
        elif kind == "response_item" and item is not None:
            self._output(item, payload, when, where)

    def _meta(self, payload: dict[str, Any]) -> None:
        self.info.session_id = as_str(payload.get("id")) or self.info.session_id
        version = as_str(payload.get("cli_version"))
        self.info.agent = f"Codex {version}" if version else "Codex"
        self.info.task = as_str(payload.get("cwd"))

    def _round(self) -> Round:
        if self.open is None:
            turn = self.turn or "turn"
            self.open = Round(
                round_id=f"{turn}:{self.in_turn}", model=self.model, turn_id=self.turn
            )
            self.in_turn += 1
            self.open.events, self.inputs = self.inputs, []
            self.rounds.append(self.open)
        return self.open

    def _output(self, item: str, payload: dict[str, Any], when: Any, where: str) -> None:
        if item == "reasoning":
            self._round().output("reasoning", when)
        elif item == "message" and payload.get("role") == "assistant":
            self._round().output("text", when)
        elif item in _CALLS:
            current = self._round()
            current.output("tool_call", when)
            call_id = as_str(payload.get("call_id")) or f"{where}call"
            row = {
                "tool_call_id": call_id,
                "tool_name": as_str(payload.get("name")) or item,
                "emitted_at": when,
            }
            current.tools.append(row)
            self.tools[call_id] = row
            arguments = payload.get("arguments", payload.get("input", payload.get("action")))
            self.content[call_id] = ToolContent(
                arguments=arguments if isinstance(arguments, str) else json.dumps(arguments)
            )

    def _result(self, payload: dict[str, Any], when: Any) -> None:
        self.inputs.append({"event_type": "tool_result", "timestamp": when})
        call_id = as_str(payload.get("call_id")) or ""
        row = self.tools.get(call_id)
        if row is None:
            return
        output = payload.get("output")
        text = output if isinstance(output, str) else json.dumps(output)
        row.update(result_at=when, result_chars=len(text))
        self.content[call_id].output = text
        self.content[call_id].exit_code = _exit_code(text)

    def _usage(self, payload: dict[str, Any], when: Any) -> None:
        usage = obj(dig(payload, "info", "last_token_usage"))
        if not usage:
            return  # rate-limit updates carry no usage and end no round
        current = self._round()
        current.output("usage_report", when)
        current.tokens = {
            "input_tokens_total": as_int(usage.get("input_tokens")),
            "prefix_tokens": as_int(usage.get("cached_input_tokens")),
            "output_tokens": as_int(usage.get("output_tokens")),
            "reasoning_output_tokens": as_int(usage.get("reasoning_output_tokens")),
        }
        self.open = None

    def close(self) -> None:
        """A response the log ends on without its usage keeps its times, tokens absent."""
        self.open = None


def _exit_code(output: str) -> int | None:
    match = _EXIT.search(output[:2000])
    if match:
        return as_int(int(match.group(1)))
    try:
        data = json.loads(output)
    except ValueError:
        return None
    return as_int(dig(data, "metadata", "exit_code"))


class CodexImporter:
    """The registry entry for Codex rollout logs."""

    name = FORMAT
    expects = (
        "a Codex rollout log (~/.codex/sessions/**/rollout-*.jsonl: records with "
        "`timestamp`, `type` session_meta/turn_context/response_item/event_msg, `payload`), "
        "or TraceLab's readable rendering"
    )

    def sniff(self, path: Path) -> bool:
        """A `payload` next to a Codex record `type`."""
        head = peek(path)
        return head.has_key("payload") and head.has_value(
            "type", '(session_meta|turn_context|response_item|event_msg)"'
        )

    def load(self, path: Path) -> list[ImportedRun]:
        """One run (see `import_codex`)."""
        return import_codex(path)
