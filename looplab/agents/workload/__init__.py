"""The workload agent: runs a trace-driven task shape through the shared loop (../README.md)."""

from looplab.agents.workload.agent import SYSTEM_PROMPT, workload_prompt, workload_toolbox
from looplab.agents.workload.runner import run_workload_task

__all__ = ["SYSTEM_PROMPT", "run_workload_task", "workload_prompt", "workload_toolbox"]
