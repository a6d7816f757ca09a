"""Traces -> inference-perf session replay input (Weka trace JSON + a ready config).

kubernetes-sigs inference-perf (PyPI `inference-perf` 0.7, Python >= 3.12) replays agentic
sessions with `data.type: weka_trace_replay` and `load.type: trace_session_replay`: it
reads one JSON document per session from `data.weka_trace_replay.trace_directory`
(`*.json`), rebuilds each request's prompt text from its block hash ids (a block id always
maps to the same text, so the server's prefix cache sees the recorded reuse), and sends a
session's requests as a dependency graph: a request waits for the latest earlier request of
its session that had ended when it started, then for the recorded gap (capped by
`max_wait_ms`); requests that overlapped run concurrently.

`weka_sessions(traces)` gives one such document per trace:

- `id`: the trace's run id (suffixed `-<index>` when two traces share one);
  `models`/`model`: the calls' model names (`looplab` when the trace lacks them; the
  written config sends every request to `--model` instead); `block_size`: `block_tokens`;
  `tool_tokens`/`system_tokens`: 0 (a trace does not split its prompt that way);
- `requests` (a trace without any is left out), one per model call with a prompt token
  count, by start: `t` seconds from the session's first call's start; `api_time` the
  call's duration (start to end), so the agent's tool and harness time between two calls
  is the gap from one's `t + api_time` to the next's `t` (inference-perf's dependency
  edges and waits come from these two); `in`: prompt tokens; `out`: completion tokens (1
  when the trace lacks them; sent as `max_tokens` with `ignore_eos`); `hash_ids`: the
  call's full prompt blocks, the ids `looplab export mooncake` derives (`mooncake_rows`,
  the one home of that formula) less a trailing partial block, which inference-perf
  synthesizes per request; `type` `"s"` with `ttft` (start to first token) when the trace
  has it, else `"n"` (information only: the server decides the replay's times).

What is lost: prompt and reply text (rebuilt from Shakespeare by inference-perf), the split
of a prompt into system/tool/user parts, subagent structure (a trace's calls form one
session; interleaved subagent calls share no prefix with their neighbours), reasoning
tokens, and calls without a prompt token count (counted in `InferencePerfExport.skipped`).

`inference_perf_config(...)` gives the config YAML (as a dict) that runs those sessions
against an OpenAI-compatible server (`server.type: vllm`, which speaks plain
`/v1/chat/completions`): `inference-perf --config_file CONFIG`. It turns off
inference-perf's idle-gap warping (`trace_idle_gap_cap_seconds: 0`: warping moves starts,
not ends, and can make a call overlap the one it waited for) and caps each wait with
`max_wait_ms` instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from looplab.traces.exporters.mooncake import mooncake_rows
from looplab.traces.io import Trace

__all__ = [
    "BLOCK_TOKENS",
    "InferencePerfExport",
    "inference_perf_config",
    "weka_sessions",
    "write_replay",
]

BLOCK_TOKENS = 64
"""inference-perf's default Weka block size (tokens per hash id)."""


@dataclass
class InferencePerfExport:
    """The session documents and what they hold."""

    sessions: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    """Requests over all sessions."""
    skipped: int = 0
    """Model calls without a prompt token count (not exported)."""
    reused_blocks: int = 0
    """Full blocks whose id the session's previous request had (prefix reuse)."""
    blocks: int = 0
    """All full blocks."""


def weka_sessions(
    traces: Sequence[Trace], *, block_tokens: int = BLOCK_TOKENS
) -> InferencePerfExport:
    """One Weka trace document per trace, its requests by start (module docstring).

    Args:
        traces: the sessions, in order.
        block_tokens: tokens per hash id block (`block_size`).
    """
    out = InferencePerfExport()
    seen: set[str] = set()
    for index, trace in enumerate(traces):
        calls = [
            c
            for c in sorted(trace.model_calls(), key=lambda c: c.start)
            if c.prompt_tokens is not None
        ]
        out.skipped += len(trace.model_calls()) - len(calls)
        rows = mooncake_rows([trace], block_tokens=block_tokens).rows
        origin = calls[0].start if calls else 0.0
        requests: list[dict[str, Any]] = []
        previous: list[int] = []
        for call, row in zip(calls, rows, strict=True):
            ids = row["hash_ids"][: row["input_length"] // block_tokens]
            out.blocks += len(ids)
            out.reused_blocks += sum(1 for a, b in zip(ids, previous, strict=False) if a == b)
            request: dict[str, Any] = {
                "t": round(call.start - origin, 6),
                "type": "n",
                "model": call.model or "looplab",
                "in": row["input_length"],
                "out": row["output_length"],
                "hash_ids": ids,
                "api_time": round(max(0.0, call.end - call.start), 6),
            }
            if call.first_token is not None:
                request["type"] = "s"
                request["ttft"] = round(max(0.0, call.first_token - call.start), 6)
            requests.append(request)
            previous = ids
        if not requests:
            continue
        session_id = trace.header.run_id if trace.header.run_id not in seen else None
        session_id = session_id or f"{trace.header.run_id}-{index}"
        seen.add(session_id)
        out.requests += len(requests)
        out.sessions.append(
            {
                "id": session_id,
                "models": sorted({r["model"] for r in requests}) or ["looplab"],
                "block_size": block_tokens,
                "tool_tokens": 0,
                "system_tokens": 0,
                "requests": requests,
            }
        )
    return out


def inference_perf_config(
    trace_directory: Path,
    *,
    url: str,
    model: str,
    tokenizer: str,
    sessions: int,
    concurrency: int,
    max_wait_s: float,
    reports: Path,
) -> dict[str, Any]:
    """The inference-perf config that replays `trace_directory`'s sessions at `url`.

    Args:
        trace_directory: where the session documents are (absolute, so the config runs
            from any directory).
        url: the server's base URL, without `/v1`.
        model: the model name sent in every request (`use_static_model`).
        tokenizer: a HuggingFace tokenizer id or local directory (inference-perf rebuilds
            prompts with it).
        sessions: sessions to run (all of them).
        concurrency: sessions active at once (0 = all).
        max_wait_s: cap on a recorded gap between a request and its predecessor's end.
        reports: where inference-perf writes its reports (per request included).

    One load worker and one data-generation process (a light client, enough for tens of
    concurrent sessions; raise `load.num_workers` for more), streamed chat requests.
    """
    return {
        "load": {
            "type": "trace_session_replay",
            "stages": [{"concurrent_sessions": concurrency, "num_sessions": sessions}],
            "num_workers": 1,
        },
        "api": {"type": "chat", "streaming": True},
        "server": {"type": "vllm", "model_name": model, "base_url": url, "ignore_eos": True},
        "tokenizer": {"pretrained_model_name_or_path": tokenizer},
        "data": {
            "type": "weka_trace_replay",
            "weka_trace_replay": {
                "trace_directory": str(trace_directory),
                "use_static_model": True,
                "static_model_name": model,
                "max_wait_ms": round(max_wait_s * 1000),
                "trace_idle_gap_cap_seconds": 0,
                "datagen_workers": 1,
            },
        },
        "report": {"request_lifecycle": {"summary": True, "per_stage": True, "per_request": True}},
        "storage": {"local_storage": {"path": str(reports)}},
    }


def write_replay(
    output: Path,
    export: InferencePerfExport,
    *,
    url: str,
    model: str,
    tokenizer: str,
    concurrency: int,
    max_wait_s: float,
) -> Path:
    """Write `output/sessions/session-NNNN.json` (earlier ones removed) and
    `output/config.yml` (reports to `output/reports`); returns the config's path.

    Args: as `inference_perf_config`; `output` is created if missing.
    """
    directory = output.resolve() / "sessions"
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("session-*.json"):
        stale.unlink()
    for index, session in enumerate(export.sessions):
        (directory / f"session-{index:04d}.json").write_text(json.dumps(session) + "\n")
    config = inference_perf_config(
        directory,
        url=url,
        model=model,
        tokenizer=tokenizer,
        sessions=len(export.sessions),
        concurrency=concurrency,
        max_wait_s=max_wait_s,
        reports=output.resolve() / "reports",
    )
    path = output / "config.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path
