"""The computer-use agent: a web app in a real browser, by accessibility refs (see ../README.md)."""

from looplab.agents.computer_use.agent import SYSTEM_PROMPT, computer_use_toolbox

__all__ = ["SYSTEM_PROMPT", "computer_use_toolbox"]
