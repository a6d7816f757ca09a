"""The coding agent: edit-test-browse on a small Python project (see ../README.md)."""

from looplab.agents.coding.agent import SYSTEM_PROMPT, coding_toolbox

__all__ = ["SYSTEM_PROMPT", "coding_toolbox"]
