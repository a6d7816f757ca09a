"""Prompt token counting: one documented tokenizer, and the name of what was used.

Order of preference (the first that loads offline wins; `Tokenizer.name` says which):

1. `tiktoken` `o200k_base`, from the cache a user's `TIKTOKEN_CACHE_DIR` names when it
   exists; else from looplab's own tiktoken cache (`<looplab cache>/tiktoken`), seeded
   once from the vocabulary file `bpe-openai` ships (the same file tiktoken downloads: its
   SHA-256, `O200K_SHA256`, is checked by both), so nothing is downloaded. Loading it this
   way costs less CPU than importing `bpe-openai` (which reads all three of its encodings;
   `looplab bench starts` prints both side by side: 0.67 s against 1.08 s here), and every
   `looplab run`, `serve`, `proxy` and `wrap` process counts tokens; the tokens are the
   same (one vocabulary, one split pattern; the bench counts a sample with both);
2. `bpe-openai` `o200k_base`, a Rust BPE whose package ships the same vocabulary, so it
   needs no download (where tiktoken is not installed or its cache cannot be written);
3. an approximation: one token per word or punctuation run, long words counted as one
   token per 4 characters (`approx-words-4c`); it over-counts o200k by 17-23% on this
   project's code, HTML and Markdown (`looplab bench backend` prints the comparison).

Long texts are counted in pieces of at most `CHUNK_CHARS` characters, cut before a space
where there is one (a BPE token never spans a space boundary, so the sum is exact there),
so a 1 MB message is counted like any other instead of hitting the encoder's input limit.

Chat messages are counted the way OpenAI documents for its chat models: each message costs
its content tokens plus 3 (role and separators), the reply is primed with 3 more, and tool
schemas cost the tokens of their JSON. Image parts cost what the profile's vision rule
says (`looplab.latency.vision`; the caller passes the rule's name). These are the
simulator's prompt tokens; its output tokens are exact by construction (each emitted
piece is one token).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import re
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from looplab.latency.vision import DEFAULT_VISION_RULE, message_image_tokens

__all__ = [
    "CHUNK_CHARS",
    "MESSAGE_OVERHEAD_TOKENS",
    "REPLY_PRIMING_TOKENS",
    "Tokenizer",
    "chunks",
    "default_tokenizer",
]

MESSAGE_OVERHEAD_TOKENS = 3
"""Tokens each chat message costs beyond its content (role, separators)."""
REPLY_PRIMING_TOKENS = 3
"""Tokens that prime the assistant's reply in every request."""

_APPROX_PATTERN = re.compile(r"\w+|[^\w\s]+|\s+")
_COUNT_MEMO_ENTRIES = 4096
_MEMO_MAX_CHARS = 64 * 1024
CHUNK_CHARS = 32 * 1024
"""Longest piece handed to the encoder at once."""


class Tokenizer:
    """Counts and splits text into tokens with one named encoding.

    Args:
        name: what is counting, e.g. `o200k_base (bpe-openai)`; recorded in usage/traces.
        encode: text -> token ids; None for the approximation.
        decode_one: token id -> text piece; None for the approximation.
    """

    def __init__(
        self,
        name: str,
        encode: Callable[[str], list[int]] | None,
        decode_one: Callable[[int], str] | None,
    ) -> None:
        self.name = name
        self._encode = encode
        self._decode_one = decode_one
        # An agent resends its whole conversation every step; remembering each message's
        # count makes a request cost only its new messages (LRU, bounded).
        self._counts: OrderedDict[str, int] = OrderedDict()

    @property
    def exact(self) -> bool:
        """True for a real BPE encoding, False for the approximation."""
        return self._encode is not None

    def count(self, text: str) -> int:
        """Number of tokens in `text` (memoised per text)."""
        if not text:
            return 0
        cached = self._counts.get(text)
        if cached is not None:
            self._counts.move_to_end(text)
            return cached
        encode = self._encode
        if encode is not None:
            counted = sum(len(encode(piece)) for piece in chunks(text))
        else:
            counted = sum(
                _approx_piece_tokens(p) for p in _APPROX_PATTERN.findall(text) if p.strip()
            )
        if len(text) <= _MEMO_MAX_CHARS:  # bounded memory: huge texts are not remembered
            self._counts[text] = counted
            if len(self._counts) > _COUNT_MEMO_ENTRIES:
                self._counts.popitem(last=False)
        return counted

    def split(self, text: str) -> list[str]:
        """Split `text` into pieces, one per token, that concatenate back to `text`."""
        if not text:
            return []
        encode, decode_one = self._encode, self._decode_one
        if encode is not None and decode_one is not None:
            pieces = [decode_one(token) for chunk in chunks(text) for token in encode(chunk)]
            if "".join(pieces) == text:
                return pieces
        return _approx_split(text)

    def count_messages(
        self,
        messages: Iterable[Mapping[str, Any]],
        tools: Iterable[Mapping[str, Any]] = (),
        vision: str = DEFAULT_VISION_RULE,
    ) -> list[int]:
        """Cumulative prompt tokens after each message (tools counted before the first).

        Args:
            messages: chat messages; their `image_url` parts count by the `vision` rule.
            tools: tool schemas.
            vision: the vision token rule (`looplab.latency.vision.VISION_RULES`).

        Returns:
            A list `c` with `c[i]` = prompt tokens of tools + messages[0..i]; the total
            prompt is `c[-1] + REPLY_PRIMING_TOKENS` (or just that when there are none).
        """
        total = sum(self.count(json.dumps(tool, sort_keys=True)) for tool in tools)
        cumulative: list[int] = []
        for message in messages:
            total += MESSAGE_OVERHEAD_TOKENS + self.count(message_text(message))
            total += message_image_tokens(message, vision)
            cumulative.append(total)
        return cumulative


def message_text(message: Mapping[str, Any]) -> str:
    """The text of a chat message that counts as prompt: content parts, name, tool calls."""
    parts: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
    for key in ("name", "tool_call_id"):
        if isinstance(message.get(key), str):
            parts.append(message[key])
    for call in message.get("tool_calls") or []:
        if isinstance(call, Mapping):
            function = call.get("function") or {}
            parts.append(str(function.get("name", "")))
            parts.append(str(function.get("arguments", "")))
    return "\n".join(parts)


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """`text` cut into pieces of at most `size` characters, before a space where possible."""
    if len(text) <= size:
        return [text]
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cut = text.rfind(" ", start + size // 2, end)
            if cut > start:
                end = cut
        pieces.append(text[start:end])
        start = end
    return pieces


def _approx_piece_tokens(piece: str) -> int:
    return max(1, (len(piece) + 3) // 4)


def _approx_split(text: str) -> list[str]:
    pieces: list[str] = []
    for piece in _APPROX_PATTERN.findall(text):
        if piece.isspace() and pieces:
            pieces[-1] += piece
            continue
        pieces.extend(piece[i : i + 4] for i in range(0, len(piece), 4))
    return pieces


O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
"""Where tiktoken fetches `o200k_base` from; its cache file is named by the URL's SHA-1."""
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""The vocabulary file's SHA-256, as tiktoken 0.14 expects it (and bpe-openai 0.1.4 ships)."""


def _seeded_tiktoken_cache() -> str | None:
    """looplab's tiktoken cache holding `o200k_base`, seeded from bpe-openai's shipped copy
    (hash-checked, written atomically); None when it cannot be had."""
    import importlib.util

    from looplab.cache import cache_dir

    try:
        folder = cache_dir() / "tiktoken"
    except (OSError, RuntimeError):  # no home directory to hold a cache
        return None
    target = folder / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if target.is_file():
        return str(folder)
    spec = importlib.util.find_spec("bpe_openai")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    shipped = Path(next(iter(spec.submodule_search_locations))) / "data" / "o200k_base.tiktoken.gz"
    try:
        data = gzip.decompress(shipped.read_bytes())
        if hashlib.sha256(data).hexdigest() != O200K_SHA256:
            return None
        folder.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.part")
        partial.write_bytes(data)
        partial.replace(target)
    except OSError:
        return None
    return str(folder)


def _load_tiktoken() -> Tokenizer | None:
    try:
        import tiktoken
    except ImportError:
        return None
    named = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    cache = named if named and os.path.isdir(named) else _seeded_tiktoken_cache()
    if cache is None:
        return None  # tiktoken would try a download; only use a local cache
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = cache  # tiktoken reads it at the call
    try:
        encoding = tiktoken.get_encoding("o200k_base")
    except Exception:  # any load failure (no network, corrupt cache) means "not available"
        return None
    finally:
        if previous is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous
    return Tokenizer(
        "o200k_base (tiktoken)",
        encoding.encode_ordinary,
        lambda token: encoding.decode_single_token_bytes(token).decode("utf-8", "replace"),
    )


def _load_bpe_openai() -> Tokenizer | None:
    # bpe-openai 0.1.x reads its data with importlib.resources' deprecated open_binary.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import bpe_openai

            encoding = bpe_openai.get_encoding("o200k_base")
        except ImportError:
            return None
        except Exception:  # a broken wheel or missing data file means "not available"
            return None
    return Tokenizer(
        "o200k_base (bpe-openai)",
        encoding.encode_ordinary,  # special-token text is text: a prompt may hold it
        lambda token: encoding.decode([token]),
    )


@functools.cache
def default_tokenizer() -> Tokenizer:
    """The best tokenizer that loads offline (see the module docstring); cached."""
    if os.environ.get("LOOPLAB_TOKENIZER") == "approx":
        return Tokenizer("approx-words-4c", None, None)
    for loader in (_load_tiktoken, _load_bpe_openai):
        tokenizer = loader()
        if tokenizer is not None:
            return tokenizer
    return Tokenizer("approx-words-4c", None, None)
