"""Issue 45 item 6: a replay divergence shows where the request first differs, so two
requests whose summaries look identical (a time or a temporary path past the summary's
80 characters) are told apart."""

from __future__ import annotations

from typing import Any

from looplab.backends.proxy.follow import Asked, StrictReplay, TolerantReplay
from looplab.backends.proxy.store import canonical, request_hash, summary

PREFIX = "pytest output: " + "." * 100


def _body(when: str) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [
            {"role": "user", "content": "fix the bug"},
            {"role": "tool", "content": f"{PREFIX} 3 passed in {when}s (/tmp/pytest-of-u/7)"},
        ],
    }


def _asked(body: dict[str, Any]) -> Asked:
    return Asked("chat", canonical(body), request_hash("chat", body), summary(body))


def test_strict_divergence_shows_the_first_differing_characters() -> None:
    """Recorded `0.41s`, replayed `0.38s`: the summaries are equal, the message shows
    `0.41` against `0.38`."""
    recorded = canonical(_body("0.41"))
    steps = [{"hash": request_hash("chat", recorded), "summary": summary(recorded)}]
    choice = StrictReplay(steps, lambda _: recorded).choose(_asked(_body("0.38")))
    divergence = choice.divergence
    assert divergence is not None and divergence.expected == divergence.got
    text = divergence.describe()
    assert "first difference at character" in text
    assert "0.41s" in text and "0.38s" in text


def test_tolerant_divergence_shows_it_too() -> None:
    """The tolerant policy serves the step and names the same first difference."""
    recorded = canonical(_body("0.41"))
    steps = [{"hash": request_hash("chat", recorded), "summary": summary(recorded)}]
    choice = TolerantReplay(steps, lambda _: recorded).choose(_asked(_body("0.38")))
    assert choice.step == 0 and choice.divergence is not None
    assert "0.41s" in choice.divergence.describe() and "0.38s" in choice.divergence.describe()
