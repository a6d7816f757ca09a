"""Replay policies: which recorded step answers a replayed request, and how they differ.

A recording (`store.Recording`) is a list of steps in the order they were made. A policy
(a `RecordingFollower`) picks the step that answers each replayed request (`choose`) and
says how the request departs from the recording (`RequestDivergence`); `REPLAY_POLICIES`
names them:

- `strict` (the default): a request is answered only by a recorded exchange with its exact
  hash (the k-th occurrence of a hash by its k-th recorded exchange, the last one again
  after that). A request whose hash is not the recording's next step is a divergence; one
  not recorded at all is a miss (the proxy answers 400 `replay_miss`, or asks its upstream).
- `tolerant`: the recording is followed session by session, step by step, whatever the
  requests hold. A session is a conversation: the requests that share their opening (the
  model and the conversation up to its first user message, `session_root`). The n-th
  request of a session gets the n-th recorded step of its session; a session whose opening
  is not in the recording is paired with the unpaired recorded session whose next step's
  request shares the longest prefix with it. A request that differs from the step it gets
  is still answered with that step's recorded reply, and the divergence says what differed
  (`compare`). A session asked past its recorded steps is a miss.

A policy is called under the recording's lock, one request at a time.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

__all__ = [
    "REPLAY_POLICIES",
    "Asked",
    "Difference",
    "RecordingFollower",
    "RequestDivergence",
    "StepChoice",
    "StrictReplay",
    "TolerantReplay",
    "compare",
    "conversation",
    "first_difference",
    "session_root",
]

RATIO_CHARS = 20_000
"""At most this many characters of each differing message go into the difflib ratio (its
cost grows with the square of the length)."""


def conversation(endpoint: str, body: dict[str, Any]) -> list[Any]:
    """The request's conversation as a list of items: chat `messages`; for the Responses
    API its `instructions` (as a system item) then its `input` (a string as one user item)."""
    if endpoint != "responses":
        messages = body.get("messages")
        return list(messages) if isinstance(messages, list) else []
    items: list[Any] = []
    if body.get("instructions"):
        items.append({"role": "system", "content": body["instructions"]})
    given = body.get("input")
    if isinstance(given, list):
        items.extend(given)
    elif given is not None:
        items.append({"role": "user", "content": given})
    return items


def session_root(endpoint: str, body: dict[str, Any]) -> str:
    """The opening that names a request's session: a hash of the endpoint, the model and
    the conversation up to and including its first user item (all of it if none)."""
    items = conversation(endpoint, body)
    users = [
        i for i, item in enumerate(items) if isinstance(item, dict) and item.get("role") == "user"
    ]
    first_user = users[0] if users else len(items) - 1
    opening = [endpoint, body.get("model"), items[: first_user + 1]]
    text = json.dumps(opening, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Difference:
    """How a replayed request differs from the recorded one it is compared with."""

    field: str | None
    """The first differing field, as a path (`messages[3].content`, `temperature`);
    None: no difference beyond the fields left out of the hash."""
    message_index: int | None
    """Index of the first conversation item that differs (None: the conversation is the
    same, another field differs)."""
    similarity: float
    """difflib ratio (0-1) of the first differing item's text, recorded vs replayed (its
    first `RATIO_CHARS` characters each); of the differing field's value when the
    conversation is the same; 1.0 when nothing differs."""
    shared_prefix: float
    """Fraction (0-1) of the longer conversation's JSON text that both share as a prefix
    (characters): how much of the prompt a prefix cache could still reuse."""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _ratio(a: Any, b: Any) -> float:
    x, y = _text(a)[:RATIO_CHARS], _text(b)[:RATIO_CHARS]
    return round(difflib.SequenceMatcher(None, x, y, autojunk=False).ratio(), 4)


def _shared_prefix(a: Sequence[Any], b: Sequence[Any]) -> float:
    x, y = _text(list(a)), _text(list(b))
    longest = max(len(x), len(y))
    shared = next(
        (i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), min(len(x), len(y))
    )
    return 1.0 if longest == 0 else round(shared / longest, 4)


def _item_field(a: Any, b: Any) -> str:
    """The first key in which two conversation items differ (`` for non-objects)."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return ""
    key = next((k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)), None)
    return f".{key}" if key else ""


def compare(endpoint: str, recorded: dict[str, Any], asked: dict[str, Any]) -> Difference:
    """How `asked` (a replayed request body) differs from `recorded` (see `Difference`).
    Both are canonical bodies (the hash's fields); the conversation is compared first."""
    before, after = conversation(endpoint, recorded), conversation(endpoint, asked)
    prefix = _shared_prefix(before, after)
    name = "input" if endpoint == "responses" else "messages"
    for index in range(max(len(before), len(after))):
        a = before[index] if index < len(before) else None
        b = after[index] if index < len(after) else None
        if a != b:
            where = f"{name}[{index}]{_item_field(a, b)}"
            return Difference(where, index, _ratio(a or "", b or ""), prefix)
    conversation_keys = {"messages", "input", "instructions"}
    keys = sorted((set(recorded) | set(asked)) - conversation_keys)
    key = next((k for k in keys if recorded.get(k) != asked.get(k)), None)
    if key is None:
        return Difference(None, None, 1.0, prefix)
    return Difference(key, None, _ratio(recorded.get(key, ""), asked.get(key, "")), prefix)


@dataclass(frozen=True)
class RequestDivergence:
    """Where a replayed session departed from its recording."""

    step: int
    """0-based index of the request in the replayed session (all requests, in order)."""
    expected: str
    """What the recording had at that step (its summary), or `end of recording`."""
    got: str
    """What was asked instead."""
    recorded: bool
    """Whether a recorded reply answered it (strict: the request is in the recording at
    another step; tolerant: the step it was paired with)."""
    served: int | None = None
    """The recorded step whose reply was served (None: none was)."""
    session_step: int | None = None
    """Tolerant: the request's index in its session."""
    field: str | None = None
    """Tolerant: the first differing field (`Difference.field`)."""
    message_index: int | None = None
    """Tolerant: the first differing conversation item (`Difference.message_index`)."""
    similarity: float | None = None
    """Tolerant: difflib ratio of the first difference (`Difference.similarity`)."""
    shared_prefix: float | None = None
    """Tolerant: shared conversation prefix fraction (`Difference.shared_prefix`)."""
    first_difference: str | None = None
    """Where the request first differs from the recorded step's, with the characters
    around it on both sides (`first_difference`); None when there is no recorded step."""

    def describe(self) -> str:
        """One line for people."""
        where_first = f"; first difference {self.first_difference}" if self.first_difference else ""
        if self.field is None and self.similarity is None:
            where = "recorded at another step" if self.recorded else "not in the recording"
            return (
                f"step {self.step}: expected {self.expected!r}, got {self.got!r} ({where})"
                + where_first
            )
        what = self.field or "a field left out of the hash"
        return (
            f"step {self.step}: served recorded step {self.served} (session step "
            f"{self.session_step}); {what} differs (similarity {self.similarity:.3f}, shared "
            f"prefix {self.shared_prefix or 0:.1%}); got {self.got!r}" + where_first
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


DIFF_CONTEXT = 24
"""Characters shown on each side of a first difference."""


def first_difference(recorded: dict[str, Any], asked: dict[str, Any]) -> str | None:
    """Where two canonical request bodies first differ, as `at character N: recorded
    '...x' vs got '...y'` (their sorted-key JSON, `DIFF_CONTEXT` characters around it), so
    two requests whose summaries look identical show what differs (a time, a temporary
    path); None when they are equal."""
    a = json.dumps(recorded, sort_keys=True, ensure_ascii=False)
    b = json.dumps(asked, sort_keys=True, ensure_ascii=False)
    if a == b:
        return None
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = max(0, at - DIFF_CONTEXT)
    lead = "..." if start else ""
    return (
        f"at character {at}: recorded {lead + a[start : at + DIFF_CONTEXT]!r} vs got "
        f"{lead + b[start : at + DIFF_CONTEXT]!r}"
    )


@dataclass(frozen=True)
class Asked:
    """A replayed request, as a policy sees it."""

    endpoint: str
    body: dict[str, Any]
    """Its canonical body (`store.canonical`)."""
    digest: str
    """Its hash (`store.request_hash`)."""
    summary: str
    """Its summary (`store.summary`)."""


@dataclass(frozen=True)
class StepChoice:
    """A policy's answer: the recorded step to serve (None: none) and any divergence."""

    step: int | None
    divergence: RequestDivergence | None = None


class RecordingFollower(Protocol):
    """A replay policy of the proxy: picks the recorded step for each replayed request
    (module docstring; not the simulator's `replay` policy, `policies.replay.ReplayPolicy`,
    which answers with a run's recorded messages)."""

    def choose(self, asked: Asked) -> StepChoice:
        """The step answering `asked` (an index into the recording's steps)."""
        ...


RequestLoader = Callable[[int], dict[str, Any]]
"""The canonical request body of a recorded step (by its index)."""


class StrictReplay:
    """Exact hashes only (module docstring).

    Args:
        steps: the recording's index entries (`hash`, `summary`), in step order.
        load: reads a recorded step's canonical request (for a divergence's first
            difference only).
    """

    def __init__(self, steps: Sequence[dict[str, Any]], load: RequestLoader) -> None:
        self.steps = steps
        self._load = load
        self._served: Counter[str] = Counter()
        self._position = 0

    def choose(self, asked: Asked) -> StepChoice:
        """The next unserved exchange with the request's hash; a divergence when it is not
        the recording's next step."""
        matching = [i for i, e in enumerate(self.steps) if e["hash"] == asked.digest]
        step, self._position = self._position, self._position + 1
        expected = self.steps[step] if step < len(self.steps) else None
        divergence = None
        if expected is None or expected["hash"] != asked.digest:
            divergence = RequestDivergence(
                step,
                expected["summary"] if expected else "end of recording",
                asked.summary,
                bool(matching),
                first_difference=(
                    first_difference(self._load(step), asked.body) if expected else None
                ),
            )
        if not matching:
            return StepChoice(None, divergence)
        n = min(self._served[asked.digest], len(matching) - 1)
        self._served[asked.digest] += 1
        chosen = matching[n]
        if divergence is not None:
            divergence = RequestDivergence(**{**asdict(divergence), "served": chosen})
        return StepChoice(chosen, divergence)


class TolerantReplay:
    """Session by session, step by step (module docstring).

    Args:
        steps: the recording's index entries, in step order.
        load: reads a recorded step's canonical request (for sessions and comparisons).
    """

    def __init__(self, steps: Sequence[dict[str, Any]], load: RequestLoader) -> None:
        self.steps = steps
        self._load = load
        self.sessions: dict[str, list[int]] = {}
        for index, entry in enumerate(steps):
            request = load(index)
            root = session_root(str(entry.get("endpoint", "chat")), request)
            self.sessions.setdefault(root, []).append(index)
        self._paired: dict[str, str] = {}
        self._next: Counter[str] = Counter()
        self._position = 0

    def choose(self, asked: Asked) -> StepChoice:
        """The n-th recorded step of the request's session (module docstring)."""
        step, self._position = self._position, self._position + 1
        root = self._session(asked)
        steps = self.sessions.get(root, []) if root is not None else []
        n = self._next[root] if root is not None else 0
        if root is not None:
            self._next[root] += 1
        if n >= len(steps):
            return StepChoice(
                None, RequestDivergence(step, "end of recording", asked.summary, False)
            )
        chosen = steps[n]
        entry = self.steps[chosen]
        if entry["hash"] == asked.digest:
            return StepChoice(chosen)
        difference = compare(asked.endpoint, self._load(chosen), asked.body)
        divergence = RequestDivergence(
            step,
            str(entry.get("summary", "")),
            asked.summary,
            True,
            served=chosen,
            session_step=n,
            first_difference=first_difference(self._load(chosen), asked.body),
            **asdict(difference),
        )
        return StepChoice(chosen, divergence)

    def _session(self, asked: Asked) -> str | None:
        """The recorded session this request's session follows (paired on first sight)."""
        root = session_root(asked.endpoint, asked.body)
        if root in self._paired:
            return self._paired[root]
        if root in self.sessions and root not in self._paired.values():
            self._paired[root] = root
            return root
        taken = set(self._paired.values())
        free = [
            r for r, steps in self.sessions.items() if r not in taken and self._next[r] < len(steps)
        ]
        if not free:
            return None
        mine = conversation(asked.endpoint, asked.body)

        def closeness(candidate: str) -> float:
            index = self.sessions[candidate][self._next[candidate]]
            recorded = self._load(index)
            return _shared_prefix(conversation(asked.endpoint, recorded), mine)

        best = max(free, key=closeness)
        self._paired[root] = best
        return best


REPLAY_POLICIES: dict[
    str, Callable[[Sequence[dict[str, Any]], RequestLoader], RecordingFollower]
] = {
    "strict": StrictReplay,
    "tolerant": TolerantReplay,
}
"""Replay policies by name (`--replay-policy`)."""
