"""Record and replay: the proxy's store of exchanges (format `looplab-proxy-1`).

A recording is a directory:

```
DIR/index.jsonl                one line per exchange, in the order they were made:
                               {"step", "hash", "endpoint", "stream", "file", "summary"}
DIR/exchanges/<hash>.<n>.json  the n-th exchange (0-based) with that request hash
```

An exchange file holds `format`, `endpoint` (`chat` | `responses`), `hash`, the canonical
`request` body, `stream`, the upstream's `status`, its reply (`events`: the SSE events as
`{"t": seconds after the request was sent, "event": name | null, "data": text}`, or
`body`: the JSON body), `usage` (prompt, cached, completion, reasoning tokens),
`message` (the assembled text and tool calls) and `upstream` timing (`first_token_s`,
`last_token_s`, `total_s`). Request headers (credentials) are never stored, and every
exchange is scrubbed before it is written (`scrub_entry`: the key in use, each
`Authorization`/`api-key` value, key-shaped strings), bodies and events included.

The request hash is SHA-256 of the endpoint and the request body with keys sorted, less
the fields that do not change what a model answers (`CANONICAL_DROP`). Replay serves the
k-th recorded exchange of a hash to its k-th occurrence (the last one again after that),
and follows the session step by step: a request whose hash is not the recording's next
one is a `Divergence`, reported with its step (and a request not recorded at all is one
too: the proxy answers it with an OpenAI-shaped 400 `replay_miss`, or sends it upstream).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from looplab.backends.proxy.calls import CallRecord
from looplab.backends.proxy.events import Item
from looplab.backends.proxy.replies import data_of
from looplab.errors import ConfigError
from looplab.traces.scrub import Scrubber

__all__ = [
    "CANONICAL_DROP",
    "STORE_FORMAT",
    "Divergence",
    "Recorder",
    "Recording",
    "exchange_entry",
    "request_hash",
    "scrub_entry",
]

STORE_FORMAT = "looplab-proxy-1"
CANONICAL_DROP = (
    "stream_options",
    "user",
    "metadata",
    "store",
    "prompt_cache_key",
    "safety_identifier",
    "service_tier",
)
"""Request fields left out of the hash: they do not change the reply."""


def canonical(body: dict[str, Any]) -> dict[str, Any]:
    """The request body as hashed and stored (`CANONICAL_DROP` left out)."""
    return {k: v for k, v in body.items() if k not in CANONICAL_DROP}


def request_hash(endpoint: str, body: dict[str, Any]) -> str:
    """The canonical hash of one request (see the module docstring)."""
    text = json.dumps([endpoint, canonical(body)], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def summary(body: dict[str, Any]) -> str:
    """A short description of a request: model and its last message's start."""
    messages = body.get("messages") or body.get("input") or []
    last: Any = messages[-1] if isinstance(messages, list) and messages else messages
    if isinstance(last, dict):
        last = last.get("content") or last.get("output") or last.get("type") or ""
    text = json.dumps(last)[:80] if not isinstance(last, str) else last[:80]
    return f"{body.get('model')}: {text}"


def scrub_entry(entry: dict[str, Any], secrets: Sequence[str]) -> dict[str, Any]:
    """`entry` with the request's credentials (`secrets`), credential-named environment
    values and key-shaped strings redacted everywhere but its hash (a 401 body that echoes
    the key must not reach the disk)."""
    scrubbed: dict[str, Any] = Scrubber(patterns=[re.escape(s) for s in secrets]).scrub(entry)
    scrubbed["hash"] = entry["hash"]
    return scrubbed


def exchange_entry(
    endpoint: str,
    body: dict[str, Any],
    call: CallRecord,
    sent: float,
    *,
    items: list[Item] | None = None,
    reply: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One exchange as stored (module docstring): streamed `items` or a `reply` body;
    times relative to `sent`. Never any request header."""

    def rel(t: float | None) -> float | None:
        return None if t is None else round(t - sent, 6)

    entry: dict[str, Any] = {
        "endpoint": endpoint,
        "hash": request_hash(endpoint, body),
        "request": canonical(body),
        "stream": call.stream,
        "status": call.status,
        "usage": vars(call.usage),
        "message": call.message,
        "upstream": {
            "first_token_s": rel(call.upstream_first_token),
            "last_token_s": rel(call.upstream_last_token),
            "total_s": rel(call.upstream_end),
        },
    }
    if items is None:
        entry["body"] = reply
    else:
        entry["events"] = [
            {"t": rel(item.arrived), "event": item.event, "data": data_of(item.raw)}
            for item in items
        ]
    return entry


@dataclass(frozen=True)
class Divergence:
    """Where a replayed session stopped following its recording."""

    step: int
    """0-based index of the request in the replayed session."""
    expected: str
    """What the recording had at that step (its summary), or `end of recording`."""
    got: str
    """What was asked instead."""
    recorded: bool
    """Whether the request is in the recording at another step (served) or not at all."""

    def describe(self) -> str:
        """One line for people."""
        where = "recorded at another step" if self.recorded else "not in the recording"
        return f"step {self.step}: expected {self.expected!r}, got {self.got!r} ({where})"


class Recorder:
    """Appends exchanges to a recording directory (thread-safe; one per proxy)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        (directory / "exchanges").mkdir(parents=True, exist_ok=True)
        index = directory / "index.jsonl"
        self._counts: Counter[str] = Counter()
        self._step = 0
        if index.exists():
            for line in index.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self._counts[entry["hash"]] += 1
                    self._step = max(self._step, int(entry["step"]) + 1)
        self._lock = threading.Lock()

    def add(self, exchange: dict[str, Any]) -> Path:
        """Write one exchange (see the module docstring) and index it."""
        digest = exchange["hash"]
        with self._lock:
            n = self._counts[digest]
            self._counts[digest] += 1
            step = self._step
            self._step += 1
        name = f"{digest}.{n}.json"
        path = self.directory / "exchanges" / name
        partial = path.with_name(f".{name}.partial")
        partial.write_text(json.dumps({"format": STORE_FORMAT, **exchange}), encoding="utf-8")
        partial.replace(path)
        entry = {
            "step": step,
            "hash": digest,
            "endpoint": exchange["endpoint"],
            "stream": exchange["stream"],
            "file": f"exchanges/{name}",
            "summary": summary(exchange["request"]),
        }
        with self._lock, (self.directory / "index.jsonl").open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")
        return path


class Recording:
    """A recording opened for replay (see the module docstring).

    Raises:
        ConfigError: the directory is not a recording (no `index.jsonl`).
    """

    def __init__(self, directory: Path) -> None:
        index = directory / "index.jsonl"
        if not index.is_file():
            raise ConfigError(
                f"{directory} is not a looplab proxy recording (no index.jsonl); record one "
                "with `looplab proxy --record DIR` or `looplab wrap --record DIR`",
                field="--replay",
            )
        self.directory = directory
        self.steps: list[dict[str, Any]] = [
            json.loads(line) for line in index.read_text(encoding="utf-8").splitlines() if line
        ]
        self.steps.sort(key=lambda e: int(e["step"]))
        self._served: Counter[str] = Counter()
        self._position = 0
        self.divergences: list[Divergence] = []
        self._lock = threading.Lock()

    def lookup(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """The recorded exchange for this request (None: not recorded); follows the step."""
        digest = request_hash(endpoint, body)
        files = [e for e in self.steps if e["hash"] == digest]
        with self._lock:
            step = self._position
            self._position += 1
            expected = self.steps[step] if step < len(self.steps) else None
            if expected is None or expected["hash"] != digest:
                self.divergences.append(
                    Divergence(
                        step,
                        expected["summary"] if expected else "end of recording",
                        summary(body),
                        bool(files),
                    )
                )
            if not files:
                return None
            n = min(self._served[digest], len(files) - 1)
            self._served[digest] += 1
        data: dict[str, Any] = json.loads(
            (self.directory / files[n]["file"]).read_text(encoding="utf-8")
        )
        return data
