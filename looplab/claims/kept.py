"""A claim's slow searches, kept in the user's cache (`looplab.cache.derived`).

The break-even search (`breakeven.py`, about a dozen re-timings of the evidence) and the
implied-value search (`implied.py`, about thirty) depend on nothing but the entry, the
package and the shipped workloads and corpus, so their results are kept under a key made of
the entry's content, the package's digest and those folders' digests (as the report's
waterfall is): a second check of the same claim reads them instead of searching again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

from looplab.bundled import bundled_corpus_dir, bundled_tasks_dir
from looplab.cache import derived
from looplab.claims.model import ClaimEntry

__all__ = ["kept"]

T = TypeVar("T")


def kept(entry: ClaimEntry, what: str, compute: Callable[[], Any], load: Callable[[Any], T]) -> T:
    """`load(compute())` for `entry`, kept in the cache as `what` (module docstring).

    Args:
        entry: the claim the value is computed for (its whole content is in the key).
        what: a file-name-safe label of the value (`break-even`).
        compute: makes the JSON value (plain dicts, lists, strings, finite numbers).
        load: turns it into what the caller uses, checking its types (TypeError, ValueError
            or KeyError: computed again).
    """
    content = hashlib.sha256(entry.model_dump_json().encode()).hexdigest()[:16]
    return derived(
        f"{what}-{entry.name}-{content}",
        compute,
        load,
        inputs=(bundled_tasks_dir() / "workload", bundled_corpus_dir()),
    )
