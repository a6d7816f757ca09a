"""Secrets streamed back in pieces never reach a recording (issue 47, finding 1).

An upstream on loopback streams, in pieces of N characters (the request's model names N),
a reply that repeats every request header and the body's `user` and `metadata`. The real
openai client sends five planted header credentials and two planted body values through a
real `ProxyServer --record`; the recording is then read back and every channel's deltas
joined: no planted value may be recoverable, for every N from 1 to 200, and a replay of
the recording streams none of them. A property test does the same to `scrub_stream`
alone, over random splits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from looplab.backends.proxy.app import ProxyServer
from looplab.backends.proxy.recordings import read_exchange, read_index
from looplab.backends.proxy.redact import body_secrets, redistribute, scrub_stream
from looplab.latency.presets import resolve_profile
from looplab.serving.appserver import AppServer
from looplab.traces.scrub import REDACTED, Scrubber
from tests.reliability.conftest import FUZZ

pytestmark = [pytest.mark.reliability]

AUTHORIZATION = "PLANTEDbearer1S2t3Uvw"
HEADERS = {
    "x-api-key": "PLANTEDxapi5D6e7F8gh",
    "x-goog-api-key": "PLANTEDgoog1A2b3C4jk",
    "cookie": "session=PLANTEDcookie2J3k4Lmn; theme=dark",
    "x-team-token": "PLANTEDtoken8P9q0Rst",
}
METADATA_SECRET = "PLANTEDmeta7Y8z9Aab"
USER = "PLANTEDuser3C4d5Ecd"
PLANTED = [
    AUTHORIZATION,
    HEADERS["x-api-key"],
    HEADERS["x-goog-api-key"],
    "PLANTEDcookie2J3k4Lmn",
    HEADERS["x-team-token"],
    METADATA_SECRET,
    USER,
]
PROFILE = resolve_profile("fast-750", ["decode_tps=200000", "ttft_s=0", "prefill_tps=null"])
"""Paced far faster than the test needs to wait."""


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    data = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [choice]}  # fmt: skip
    return f"data: {json.dumps(data)}\n\n".encode()


def _echo_app() -> Starlette:
    """Streams `you sent {headers} {user} {metadata}` in pieces of the model's N chars."""

    async def chat(request: Request) -> Response:
        body = json.loads(await request.body())
        size = int(str(body["model"]).removeprefix("piece-"))
        text = f"you sent {dict(request.headers)} user={body.get('user')} {body.get('metadata')}"

        async def stream() -> Any:
            yield _chunk({"role": "assistant", "content": ""})
            for at in range(0, len(text), size):
                yield _chunk({"content": text[at : at + size]})
            yield _chunk({}, "stop")
            yield b"data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A recording of 200 streamed echoes (pieces of 1..200 characters), and the texts the
    client received."""
    store = tmp_path_factory.mktemp("stream-secrets") / "rec"
    got: list[str] = []
    with (
        AppServer(_echo_app(), name="echo-upstream") as upstream,
        ProxyServer(PROFILE, upstream=upstream.base_url, record=store) as proxy,
    ):
        client = openai.OpenAI(
            base_url=proxy.base_url, api_key=AUTHORIZATION, max_retries=0, default_headers=HEADERS
        )
        for size in range(1, 201):
            stream = client.chat.completions.create(
                model=f"piece-{size}",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
                user=USER,
                metadata={"secret": METADATA_SECRET},
                store=True,
            )
            got.append("".join(c.choices[0].delta.content or "" for c in stream if c.choices))
        client.close()
    return store, got


def _joined(store: Path) -> list[str]:
    """Each recorded exchange's content deltas, joined."""
    texts = []
    for entry in read_index(store)[0]:
        events = read_exchange(store, entry["file"])["events"]
        parts = []
        for event in events:
            try:
                data = json.loads(event["data"])
            except ValueError:
                continue
            for choice in data.get("choices") or []:
                parts.append((choice.get("delta") or {}).get("content") or "")
        texts.append("".join(parts))
    return texts


def test_no_secret_is_recoverable_from_joined_deltas(
    recorded: tuple[Path, list[str]], campaign: Any
) -> None:
    """Pieces of 1 to 200 characters: the client got every secret back (live), yet joining
    each recorded exchange's deltas, or reading any file raw, finds none of the 7 planted."""
    store, got = recorded
    assert all(all(value in text for value in PLANTED) for text in got)  # the echo happened
    joined = _joined(store)
    assert len(joined) == 200 and all("you sent" in text for text in joined)
    found = [(n + 1, v) for n, text in enumerate(joined) for v in PLANTED if v in text]
    raw = "".join(p.read_text(encoding="utf-8") for p in store.rglob("*") if p.is_file())
    found += [(0, v) for v in PLANTED if v in raw]
    campaign.add("proxy streamed secrets planted", 7 * 200)
    campaign.add("proxy streamed secrets found", len(found))
    assert found == [], found[:10]
    assert all(text.count(REDACTED) >= len(PLANTED) for text in joined)


@pytest.mark.parametrize("size", [1, 4, 37, 200])
def test_replay_streams_no_secret(recorded: tuple[Path, list[str]], size: int) -> None:
    """`proxy --replay` of the recording streams the echo without any planted value."""
    store, _ = recorded
    with ProxyServer(PROFILE, replay=store) as proxy:
        client = openai.OpenAI(base_url=proxy.base_url, api_key="EMPTY", max_retries=0)
        stream = client.chat.completions.create(
            model=f"piece-{size}", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        client.close()
    assert "you sent" in text
    assert [v for v in PLANTED if v in text] == []


def test_body_secrets_names_the_clients_values() -> None:
    """`user`, `metadata` strings and credential-named fields are secrets; the prompt is not."""
    body = {
        "model": "m",
        "user": USER,
        "metadata": {"secret": METADATA_SECRET, "n": {"deep": "deepvalue-123"}},
        "messages": [{"role": "user", "content": "long enough prompt"}],
        "extra": {"api_key": "PLANTEDnested12345"},
    }
    assert set(body_secrets(body)) == {USER, METADATA_SECRET, "deepvalue-123",
                                       "PLANTEDnested12345"}  # fmt: skip


@FUZZ
@given(
    text=st.text(alphabet="abc xyz:,'{}", max_size=120),
    at=st.integers(0, 120),
    cuts=st.lists(st.integers(1, 200), min_size=1, max_size=40),
)
def test_scrub_stream_leaves_no_secret_in_any_split(text: str, at: int, cuts: list[int]) -> None:
    """A secret planted anywhere in a text streamed in random pieces (1..200 characters):
    the scrubbed events joined are the text with it redacted, and no event holds it."""
    secret = "PLANTEDsecret9Z8y"
    whole = text[:at] + secret + text[at:] + secret
    pieces, start = [], 0
    for cut in cuts * (len(whole) // sum(cuts) + 1):
        if start >= len(whole):
            break
        pieces.append(whole[start : start + cut])
        start += cut
    events = [{"t": 0.0, "event": None, "data": _chunk({"content": p}).decode()[6:-2]}
              for p in pieces]  # fmt: skip
    events.append({"t": 0.0, "event": None, "data": "[DONE]"})
    scrubbed = scrub_stream(events, Scrubber(patterns=[secret], environ={}))
    joined = "".join(json.loads(e["data"])["choices"][0]["delta"]["content"] for e in scrubbed[:-1])
    assert joined == whole.replace(secret, REDACTED)
    assert scrubbed[-1]["data"] == "[DONE]"


def test_redistribute_keeps_piece_boundaries_outside_secrets() -> None:
    """Characters outside a redacted span stay in their own piece; the span's marker goes
    where it started."""
    pieces = ["ab", "cSEC", "RET", "de"]
    assert redistribute(pieces, [(3, 9)]) == ["ab", f"c{REDACTED}", "", "de"]


def test_responses_and_tool_call_channels_are_scrubbed_joined() -> None:
    """A secret split across Responses `output_text.delta` events, and across a chat tool
    call's `arguments` pieces, is redacted in the join; another item's text is untouched."""
    secret = "PLANTEDsecret9Z8y"
    scrubber = Scrubber(patterns=[secret], environ={})

    def text_delta(delta: str, item: int) -> dict[str, Any]:
        data = {"type": "response.output_text.delta", "item_id": f"msg_{item}",
                "output_index": item, "content_index": 0, "delta": delta}  # fmt: skip
        return {"event": "response.output_text.delta", "data": json.dumps(data)}

    events = [text_delta("key PLANTED", 0), text_delta("other item", 1),
              text_delta("secret9Z8y end", 0)]  # fmt: skip
    out = [json.loads(e["data"])["delta"] for e in scrub_stream(events, scrubber)]
    assert out == [f"key {REDACTED}", "other item", " end"]

    def args(piece: str, first: bool = False) -> dict[str, Any]:
        call: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
        if first:
            call = {**call, "id": "call_1", "type": "function"}
        delta = {"tool_calls": [call]}
        return {"event": None, "data": _chunk(delta).decode()[6:-2]}

    events = [args('{"k": "PLANTEDse', True), args('cret9Z8y"}')]
    joined = "".join(
        json.loads(e["data"])["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        for e in scrub_stream(events, scrubber)
    )
    assert joined == f'{{"k": "{REDACTED}"}}'
