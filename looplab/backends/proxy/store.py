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
`message` (the assembled text and tool calls), `upstream` timing (`first_token_s`,
`last_token_s`, `total_s`) and, for a stream the upstream stopped before its end (no
`[DONE]`, finish_reason or terminal event; a reset; cut mid-event), `truncated`: why (its
index line says `"truncated": true`; replayed, it ends in the same SSE error event).
Request headers (credentials) are never stored, and every
exchange is scrubbed before it is written (`scrub_entry`: the key in use, every credential
the request carried, `traces.scrub.credential_values`, the body's own identifiers,
`redact.body_secrets`, key-shaped strings), bodies and events included; a streamed reply
is scrubbed joined, not event by event (`redact.scrub_stream`), so no split of its
pieces keeps a secret. Everything read back goes through `recordings.py` (names inside the
directory, regular files, size caps, a torn last line skipped, types checked); one
recorder per directory (`recordings.hold_recording`).

The request hash is SHA-256 of the endpoint and the request body with keys sorted, less
the fields that do not change what a model answers (`CANONICAL_DROP`). Which recorded
exchange answers a replayed request is the replay policy's choice (`follow.py`): `strict`
(the default) serves the k-th recorded exchange of a hash to its k-th occurrence (the last
one again after that) and answers a request not recorded at all with an OpenAI-shaped 400
`replay_miss` (or sends it upstream); `tolerant` follows the recording session by
session, step by step, and serves the step's reply even when the request differs. Either
way a departure from the recording is a `RequestDivergence`, reported with its step (and, when
tolerant, what differed and how similar it is), logged (`proxy.replay_divergence`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog

from looplab.backends.proxy.calls import CallRecord
from looplab.backends.proxy.events import Item
from looplab.backends.proxy.follow import REPLAY_POLICIES, Asked, RequestDivergence
from looplab.backends.proxy.recordings import (
    RecordingError,
    hold_recording,
    read_exchange,
    read_index,
    release_recording,
)
from looplab.backends.proxy.redact import scrub_stream
from looplab.backends.proxy.replies import data_of
from looplab.backends.simulator.protocol import ApiError
from looplab.errors import ConfigError
from looplab.traces.scrub import Scrubber

__all__ = [
    "CANONICAL_DROP",
    "STORE_FORMAT",
    "Recorder",
    "Recording",
    "RequestDivergence",
    "exchange_entry",
    "request_hash",
    "scrub_entry",
]

log = structlog.get_logger(__name__)

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
    the key must not reach the disk). A streamed reply's events are scrubbed as a whole
    first (`redact.scrub_stream`: a secret streamed in pieces is redacted, not kept by
    every piece being too short to match)."""
    scrubber = Scrubber(patterns=[re.escape(s) for s in secrets])
    if isinstance(entry.get("events"), list):
        entry = {**entry, "events": scrub_stream(entry["events"], scrubber)}
    scrubbed: dict[str, Any] = scrubber.scrub(entry)
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
    cut: str | None = None,
) -> dict[str, Any]:
    """One exchange as stored (module docstring): streamed `items` or a `reply` body;
    times relative to `sent`; `cut`: why the stream stopped before its end (stored as
    `truncated`). Never any request header."""

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
    if cut is not None:
        entry["truncated"] = cut
    return entry


class Recorder:
    """Appends exchanges to a recording directory (thread-safe; one per proxy).

    Holds the directory's writer lock (`recordings.hold_recording`) until `close`; an
    existing index is read by the format's reader (a torn last line is cut off first, so
    the next entry starts on a line of its own).

    Raises:
        RecordingError: another process records into the directory (named), or its
            index is corrupt (names the line).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock_fd: int | None = hold_recording(directory)
        try:
            self._counts: Counter[str] = Counter()
            self._step = 0
            index = directory / "index.jsonl"
            if index.exists() or index.is_symlink():
                entries, intact = read_index(directory, field="--record")
                for entry in entries:
                    self._counts[entry["hash"]] += 1
                    self._step = max(self._step, int(entry["step"]) + 1)
                _cut(index, intact)
        except BaseException:
            self.close()
            raise
        self._lock = threading.Lock()

    def close(self) -> None:
        """Release the directory's writer lock (idempotent)."""
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            release_recording(fd)

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
        partial = path.with_name(f".{name}.{os.getpid()}.partial")
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
        if exchange.get("truncated"):
            entry["truncated"] = True
        with self._lock, (self.directory / "index.jsonl").open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")
        return path


def _cut(index: Path, intact: int) -> None:
    """Drop a torn tail from `index` (past `intact` bytes) and end it with a newline."""
    with index.open("rb+") as handle:
        handle.truncate(intact)
        if intact:
            handle.seek(intact - 1)
            if handle.read(1) != b"\n":
                handle.write(b"\n")


class Recording:
    """A recording opened for replay (see the module docstring).

    Args:
        directory: the recording.
        policy: how requests are paired with recorded steps (`follow.REPLAY_POLICIES`:
            `strict`, exact hashes; `tolerant`, step by step whatever the request holds).

    Raises:
        ConfigError: an unknown policy; `RecordingError` (a `ConfigError`): the directory
            is not a recording, or its index or an exchange breaks the format (named by
            `recordings.read_index` / `read_exchange`).
    """

    def __init__(self, directory: Path, policy: str = "strict") -> None:
        if policy not in REPLAY_POLICIES:
            raise ConfigError(
                f"unknown replay policy {policy!r}",
                field="--replay-policy",
                allowed=tuple(REPLAY_POLICIES),
                given=policy,
            )
        self.directory = directory
        self.policy_name = policy
        self.steps, _ = read_index(directory)
        for entry in self.steps:  # every exchange is checked before the first request
            try:
                read_exchange(directory, entry["file"])
            except RecordingError as exc:
                raise RecordingError(f"{exc.message} (index.jsonl step {entry['step']})") from None
        self._requests: dict[int, dict[str, Any]] = {}
        self.policy = REPLAY_POLICIES[policy](self.steps, self.recorded_request)
        self.divergences: list[RequestDivergence] = []
        self._lock = threading.Lock()

    def exchange(self, step: int) -> dict[str, Any]:
        """The recorded exchange of a step (an index into `steps`)."""
        try:
            return read_exchange(self.directory, self.steps[step]["file"])
        except RecordingError as exc:  # changed on disk since it was opened
            raise ApiError(
                500, f"replay: {exc}", type="server_error", code="recording_unreadable"
            ) from None

    def recorded_request(self, step: int) -> dict[str, Any]:
        """The canonical request body recorded at a step (read once)."""
        if step not in self._requests:
            self._requests[step] = dict(self.exchange(step).get("request") or {})
        return self._requests[step]

    def lookup(
        self, endpoint: str, body: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, RequestDivergence | None]:
        """The recorded exchange that answers this request under the policy (None: none),
        and how the request departs from the recording (None: it does not); a departure
        is also appended to `divergences` and logged."""
        asked = Asked(endpoint, canonical(body), request_hash(endpoint, body), summary(body))
        with self._lock:
            choice = self.policy.choose(asked)
            if choice.divergence is not None:
                self.divergences.append(choice.divergence)
                log.warning(
                    "proxy.replay_divergence",
                    policy=self.policy_name,
                    description=choice.divergence.describe(),
                    **choice.divergence.as_dict(),
                )
        found = None if choice.step is None else self.exchange(choice.step)
        return found, choice.divergence
