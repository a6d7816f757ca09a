"""Claude Code sessions -> looplab traces, one run per session.

Accepted (learned from TraceLab's `example_sessions/claude/trace.json` and the logs it
derives from): Claude Code's session log, `~/.claude/projects/<project>/<session>.jsonl`,
one record per line, or TraceLab's readable rendering of it (`# ...` comment lines, then
`===== record 0001 =====` before each pretty-printed record). Records: `type: user` (a
string `message.content` is a user message; `tool_result` blocks are tool results, with
`is_error`), `type: assistant` (one record per content block: `thinking`, `text`,
`tool_use`; all blocks of one model response share `message.id` and repeat its `usage`:
`input_tokens` (uncached), `cache_creation_input_tokens`, `cache_read_input_tokens`,
`output_tokens`), each with an ISO `timestamp`; `sessionId`, `version`, `cwd`; and
bookkeeping records (`mode`, `ai-title`, `file-history-snapshot`, `system`, ...), skipped.
Sidechain records (`isSidechain: true`: a sub-agent's own conversation, inline in the
session file or in its companion `<session>/subagents/agent-<agentId>.jsonl` files, read
too) become sub-runs (looplab-2): one per `agentId` (else per sidechain root, following
`parentUuid`), spawned by the round whose `Task` / `Agent` tool call started it and joined
by the first round after that call's result. The result names the sub-agent by
`toolUseResult.agentId` or an `agentId: <id>` line; else the sidechain's first user
message equals the call's `prompt`. Internal `agent-acompact-*` files are skipped.

Timing: see `sessions.py` (TraceLab's round definition). Tool time: the `tool_use`
record's timestamp -> the `tool_result` record's. Claude Code records no exit codes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import SubRunDraft
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.sessions import Round, SessionInfo, ToolContent, session_draft
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import as_int, as_str, json_records, obj, safe_run_id

__all__ = ["ClaudeCodeImporter", "import_claude_code"]

FORMAT = "claude-code"
_SPAWNERS = ("Task", "Agent")
_AGENT_ID = re.compile(r"agent_?[iI]d:\s*(\S+)")
_OUTPUTS = {"thinking": "reasoning", "redacted_thinking": "reasoning", "text": "text"}


def import_claude_code(path: Path) -> list[ImportedRun]:
    """Import a Claude Code session log.

    Returns:
        One run per `sessionId` in the file.

    Raises:
        TraceError: not JSON, or no user/assistant records (named).
    """
    sessions: dict[str, _Session] = {}
    roots: dict[str, str] = {}
    for where, record in [*_records(path), *_companions(path)]:
        session_id = as_str(record.get("sessionId"))
        if session_id is None or record.get("type") not in ("user", "assistant", "ai-title"):
            continue
        session = sessions.setdefault(session_id, _Session(session_id))
        if record.get("isSidechain") is True:
            session.sidechain(_chain_key(record, roots), record, where)
        else:
            session.add(record, where)
    runs = [s for s in sessions.values() if s.rounds]
    if not runs:
        raise TraceError("no Claude Code user/assistant records with a `sessionId`", path=str(path))
    out = []
    for session in runs:
        draft = session_draft(path, session.info, session.rounds, session.content)
        draft.subruns = session.subruns(path)
        out.append(build_run(draft))
    return out


def _companions(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Records of the session's sub-agent files (`<session>/subagents/agent-*.jsonl`)."""
    folder = path.parent / path.name.removesuffix(".jsonl") / "subagents"
    out: list[tuple[str, dict[str, Any]]] = []
    for file in sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []:
        if not file.name.startswith("agent-acompact-"):
            out += [(f"{file.name}: {w}", r) for w, r in _records(file)]
    return out


def _chain_key(record: dict[str, Any], roots: dict[str, str]) -> str:
    """A sidechain record's sub-agent: its `agentId`, else its chain's root uuid."""
    agent = as_str(record.get("agentId"))
    uuid = as_str(record.get("uuid")) or ""
    parent = as_str(record.get("parentUuid"))
    root = roots.get(parent or "", parent or uuid)
    roots[uuid] = root
    return agent or root


def _records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    records = json_records(path)
    if len(records) == 1 and isinstance(records[0][1], list):
        records = [(f"records[{i}]: ", r) for i, r in enumerate(records[0][1])]
    return [(where, record) for where, record in records if isinstance(record, dict)]


class _Session:
    """One session's rounds, assembled record by record."""

    def __init__(self, session_id: str) -> None:
        self.info = SessionInfo(fmt=FORMAT, session_id=session_id, agent="Claude Code")
        self.rounds: list[Round] = []
        self.content: dict[str, ToolContent] = {}
        self.tools: dict[str, dict[str, Any]] = {}
        self.inputs: list[dict[str, Any]] = []
        self.chains: dict[str, _Session] = {}
        self.spawns: dict[str, _Spawn] = {}

    def sidechain(self, key: str, record: dict[str, Any], where: str) -> None:
        """A sidechain record: into its sub-agent's own session."""
        self.chains.setdefault(key, _Session(key)).add(record, where)

    def subruns(self, path: Path) -> list[SubRunDraft]:
        """The sub-agents' sessions as sub-runs, linked to their spawning calls."""
        by_prompt = {s.prompt: s for s in self.spawns.values() if s.prompt}
        out = []
        for key, chain in self.chains.items():
            if not chain.rounds:
                continue
            spawn = next((s for s in self.spawns.values() if s.agent_id == key), None)
            spawn = spawn or by_prompt.get(chain.info.prompt or "")
            sub = SubRunDraft(
                id=safe_run_id(key),
                steps=session_draft(path, chain.info, chain.rounds, chain.content).steps,
            )
            if spawn is not None:
                sub.parent_step, sub.join_step = spawn.step, spawn.join
                sub.agent, sub.description = spawn.kind, spawn.prompt
                sub.spawn_call_id = spawn.call_id
            out.append(sub)
        return out

    def add(self, record: dict[str, Any], where: str) -> None:
        if record.get("type") == "ai-title":
            self.info.task = self.info.task or as_str(record.get("aiTitle"))
            return
        version = as_str(record.get("version"))
        if version and self.info.agent == "Claude Code":
            self.info.agent = f"Claude Code {version}"
        message = obj(record.get("message"))
        if record.get("type") == "assistant":
            self._assistant(message, record.get("timestamp"), where)
        else:
            self._user(message, record.get("timestamp"), obj(record.get("toolUseResult")))

    def _assistant(self, message: dict[str, Any], timestamp: Any, where: str) -> None:
        message_id = as_str(message.get("id")) or f"{where}message"
        current = self.rounds[-1] if self.rounds else None
        if current is None or current.round_id != message_id:
            current = Round(round_id=message_id, model=as_str(message.get("model")))
            current.events, self.inputs = self.inputs, []
            self.rounds.append(current)
        for block in _blocks(message.get("content")):
            kind = as_str(block.get("type")) or ""
            if kind == "tool_use":
                self._tool_use(current, block, timestamp)
            current.output(
                "tool_call" if kind == "tool_use" else _OUTPUTS.get(kind, kind), timestamp
            )
        usage = obj(message.get("usage"))
        if usage:
            current.tokens = _tokens(usage)

    def _tool_use(self, current: Round, block: dict[str, Any], timestamp: Any) -> None:
        call_id = as_str(block.get("id")) or f"{current.round_id}:{len(current.tools)}"
        name = as_str(block.get("name"))
        row = {"tool_call_id": call_id, "tool_name": name, "emitted_at": timestamp}
        current.tools.append(row)
        self.tools[call_id] = row
        self.content[call_id] = ToolContent(arguments=json.dumps(block.get("input", {})))
        if name in _SPAWNERS:
            given = obj(block.get("input"))
            self.spawns[call_id] = _Spawn(
                call_id=call_id,
                step=len(self.rounds) - 1,
                kind=as_str(given.get("subagent_type")) or name,
                prompt=as_str(given.get("prompt")),
            )

    def _user(self, message: dict[str, Any], timestamp: Any, result: dict[str, Any]) -> None:
        content = message.get("content")
        if timestamp is None:
            return
        if isinstance(content, str):
            self.info.prompt = self.info.prompt or content
            self.inputs.append({"event_type": "user_message", "timestamp": timestamp})
            return
        for block in _blocks(content):
            if block.get("type") == "tool_result":
                self._tool_result(block, timestamp)
                self._joined(block, result)
            elif block.get("type") == "text":
                self.inputs.append({"event_type": "user_message", "timestamp": timestamp})

    def _tool_result(self, block: dict[str, Any], timestamp: Any) -> None:
        self.inputs.append({"event_type": "tool_result", "timestamp": timestamp})
        call_id = as_str(block.get("tool_use_id")) or ""
        row = self.tools.get(call_id)
        if row is None:
            return
        output = _text(block.get("content"))
        row.update(result_at=timestamp, result_chars=len(output))
        if isinstance(block.get("is_error"), bool):
            row["is_error"] = block["is_error"]
        self.content[call_id].output = output

    def _joined(self, block: dict[str, Any], result: dict[str, Any]) -> None:
        """A spawning call's result: the sub-agent it names, joined by the next round."""
        spawn = self.spawns.get(as_str(block.get("tool_use_id")) or "")
        if spawn is None:
            return
        spawn.join = len(self.rounds)
        named = _AGENT_ID.search(_text(block.get("content")))
        spawn.agent_id = as_str(result.get("agentId")) or (named.group(1) if named else None)


@dataclass
class _Spawn:
    """A `Task` / `Agent` call: the round that made it and the one that read its result."""

    call_id: str
    step: int
    kind: str
    prompt: str | None
    join: int | None = None
    agent_id: str | None = None


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(as_str(b.get("text")) or "" for b in _blocks(content))


def _tokens(usage: dict[str, Any]) -> dict[str, Any]:
    """TraceLab's Claude accounting: prompt = uncached + cache writes + cache reads."""
    uncached = as_int(usage.get("input_tokens"))
    written = as_int(usage.get("cache_creation_input_tokens")) or 0
    read = as_int(usage.get("cache_read_input_tokens"))
    total = None if uncached is None else uncached + written + (read or 0)
    return {
        "input_tokens_total": total,
        "prefix_tokens": read,
        "output_tokens": as_int(usage.get("output_tokens")),
        "reasoning_output_tokens": None,
    }


class ClaudeCodeImporter:
    """The registry entry for Claude Code session logs."""

    name = FORMAT
    expects = (
        "a Claude Code session log (~/.claude/projects/*/*.jsonl: records with `sessionId`, "
        "`type` user/assistant, `message`, `timestamp`), or TraceLab's readable rendering"
    )

    def sniff(self, path: Path) -> bool:
        """`sessionId` plus a `type` of a Claude Code record, as JSON lines or records."""
        head = peek(path)
        return head.has_key("sessionId") and head.has_value(
            "type", '(user|assistant|summary|mode|permission-mode|file-history-snapshot)"'
        )

    def load(self, path: Path) -> list[ImportedRun]:
        """One run per session (see `import_claude_code`)."""
        return import_claude_code(path)
