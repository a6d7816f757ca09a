"""Prefix cache accounting: which prompt tokens were seen before and need no prefill.

A prompt is the tool schemas followed by the messages. Each prefix (tools + messages
0..i) gets a chained hash; the cache remembers the hashes it has seen with an expiry
(`ttl_s` after last use). A request's cached tokens are the token count of its longest
remembered prefix, rounded down to `block_tokens` and zero below `min_tokens`. Every
prefix of the request is then remembered (or refreshed). A growing conversation therefore
pays prefill only for what each step added, as with real prompt caching.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["PrefixCache", "prefix_hashes"]


def prefix_hashes(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()
) -> list[str]:
    """Chained hashes: `result[i]` identifies tools + messages[0..i]."""
    digest = hashlib.blake2b(json.dumps(list(tools), sort_keys=True).encode(), digest_size=16)
    out: list[str] = []
    for message in messages:
        digest = digest.copy()
        digest.update(json.dumps(message, sort_keys=True, default=str).encode())
        out.append(digest.hexdigest())
    return out


class PrefixCache:
    """Remembers prompt prefixes for `ttl_s` after their last use (LRU-bounded).

    Args:
        ttl_s: how long a prefix stays usable after it was last seen.
        block_tokens: cached counts are rounded down to a multiple of this.
        min_tokens: prefixes shorter than this are never reported as cached.
        max_entries: memory bound; the least recently used prefixes go first.
    """

    def __init__(
        self, ttl_s: float, block_tokens: int = 1, min_tokens: int = 0, max_entries: int = 200_000
    ) -> None:
        self.ttl_s = ttl_s
        self.block_tokens = block_tokens
        self.min_tokens = min_tokens
        self.max_entries = max_entries
        self._expiry: OrderedDict[str, float] = OrderedDict()

    def lookup_and_store(self, hashes: Sequence[str], cumulative: Sequence[int], now: float) -> int:
        """Return the cached token count of this prompt, then remember all its prefixes.

        Args:
            hashes: `prefix_hashes(...)` of the request.
            cumulative: prompt tokens after each message (same length as `hashes`).
            now: current time on the server clock.
        """
        cached = 0
        for index in range(len(hashes) - 1, -1, -1):
            expiry = self._expiry.get(hashes[index])
            if expiry is not None and expiry >= now:
                cached = cumulative[index]
                break
        for key in hashes:
            self._expiry[key] = now + self.ttl_s
            self._expiry.move_to_end(key)
        while len(self._expiry) > self.max_entries:
            self._expiry.popitem(last=False)
        if cached < self.min_tokens:
            return 0
        return cached - cached % self.block_tokens

    def __len__(self) -> int:
        return len(self._expiry)
