"""The scripted policy's `{ref:ROLE "NAME"}` placeholders: resolved from the latest snapshot."""

from __future__ import annotations

from looplab.backends.policies.scripted import latest_snapshot, resolve_refs
from looplab.backends.simulator.protocol import ChatMessage
from looplab.tasks import ScriptedCall, ScriptedStep

SNAPSHOT = """Page: Shop (http://127.0.0.1:1/)
- main [ref=e2]:
  - heading "Shop" [level=1] [ref=e3]
  - button "Add" [ref=e5]
  - button "Add" [ref=e7]
  - textbox "Email" [active] [ref=e9]: ada@example.org
  - textbox "Email confirm" [ref=e11]
"""


def _step(*refs: str) -> ScriptedStep:
    return ScriptedStep(calls=[ScriptedCall(tool="click", args={"ref": ref}) for ref in refs])


def test_refs_resolve_by_role_exact_name_and_ordinal() -> None:
    """Exact names (not prefixes), attributes before the ref, and `#K` for the K-th match."""
    step, missing = resolve_refs(
        _step('{ref:textbox "Email"}', '{ref:button "Add"#2}', '{ref:heading "Shop"}'), SNAPSHOT
    )
    assert missing is None
    assert [c.args["ref"] for c in step.calls] == ["e9", "e7", "e3"]


def test_a_missing_element_is_reported_not_guessed() -> None:
    """An element not on the page leaves the step unresolved with a reason."""
    step, missing = resolve_refs(_step('{ref:button "Pay"}'), SNAPSHOT)
    assert missing == 'no button "Pay" on the page'
    assert step.calls[0].args["ref"] == '{ref:button "Pay"}'


def test_latest_snapshot_skips_results_without_refs() -> None:
    """The snapshot is the latest tool result holding refs, not a later `Typed ...` line."""
    messages = [
        ChatMessage(role="tool", tool_call_id="a", content=SNAPSHOT),
        ChatMessage(role="tool", tool_call_id="b", content="Typed 3 characters into e9."),
    ]
    assert latest_snapshot(messages) == SNAPSHOT
    assert latest_snapshot(messages[1:]) == ""


def test_names_outside_ascii_resolve_as_the_snapshot_spells_them() -> None:
    """A name with a euro sign matches the snapshot's raw UTF-8, not a JSON \\u escape."""
    snapshot = '- checkbox "Breakdown cover (+€45)" [ref=f4e119]\n- radio "Café" [ref=f4e120]'
    step, missing = resolve_refs(
        _step('{ref:checkbox "Breakdown cover (+€45)"}', '{ref:radio "Café"}'), snapshot
    )
    assert missing is None
    assert [c.args["ref"] for c in step.calls] == ["f4e119", "f4e120"]
