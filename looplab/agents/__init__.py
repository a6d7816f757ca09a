"""The agents: LangGraph loops that run real edit-test-browse tasks (coding, computer use,
trace-driven), timed step by step.

The loop (`loop.py`) calls the model, dispatches the tool calls and records every step;
`runner.py` runs one agent on one task in a sandbox. See README.md in this folder.
"""
