"""Wrapped agents: a foreign agent command as an experiment's agent (`looplab wrap` per cell).

```yaml
wrapped:
  - name: agents-sdk-fixer
    command: [python, my_agent.py, "{prompt}"]
agents: [agents-sdk-fixer]
backends:
  - {name: slow-80, profile: slow-80}
  - {name: fast-750, profile: fast-750}
tasks: [coding/fix-pager]
```

Each cell runs the command through the pacing proxy (`looplab.backends.proxy.wrap`) at
the cell's backend: a simulated backend's profile paces a fast in-process simulator
upstream (the agent picks its model id, e.g. `looplab-lorem`), or the wrapped agent's own
`upstream` / `replay`; a `real` backend is the upstream itself, only measured (a pass-
through profile). The command runs on this host in a fresh copy of the task's workspace
(`{workspace}`), with `{task}` and `{prompt}` replaced in its arguments and also given as
`LOOPLAB_TASK` / `LOOPLAB_TASK_PROMPT`. The task's check is not run (a wrapped agent
works outside looplab's sandboxes): the agent's `check` command (run after it in the
workspace, exit 0 = solved) or else the command's exit code is the verdict
(`looplab.backends.proxy.verdict`).
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from pathlib import Path

from looplab.backends.proxy.wrap import FAST_UPSTREAM, run_wrapped
from looplab.experiments.config import BackendSpec
from looplab.experiments.wrapped_agent import WrappedAgent
from looplab.latency.presets import resolve_profile
from looplab.latency.profile import LatencyProfile
from looplab.tasks import load_task
from looplab.traces.cell import TraceCell
from looplab.traces.io import read_trace
from looplab.traces.schema import RunEndEvent
from looplab.traces.scrub import remember_secret

__all__ = ["FAST_UPSTREAM", "PASS_THROUGH", "fast_upstream", "run_wrapped_cell"]

PASS_THROUGH: dict[str, object] = {
    "decode_tps": 1_000_000,
    "ttft_s": 0,
    "prefill_tps": None,
    "prefix_cache": False,
}
"""The profile for a real backend: the proxy only measures, the API sets the pace."""


def fast_upstream(
    backend: BackendSpec, agent: WrappedAgent, profile: LatencyProfile | None
) -> BackendSpec | None:
    """The fast simulated backend the proxy paces down, for a simulated backend whose
    wrapped agent names no upstream or recording of its own (else None)."""
    if profile is None or agent.upstream or agent.replay:
        return None
    overrides = {**backend.overrides, **FAST_UPSTREAM}
    return backend.model_copy(update={"name": f"{backend.name}+up", "overrides": overrides})


async def run_wrapped_cell(
    agent: WrappedAgent,
    *,
    task_id: str,
    profile: LatencyProfile | None,
    upstream: str | None,
    trace: Path,
    run_id: str,
    experiment: str,
    cell: TraceCell,
) -> RunEndEvent:
    """Run one cell of a wrapped agent, write its trace to `trace`, return its end.

    Args:
        profile: the backend's profile (None for a real backend: pass-through).
        upstream: the backend's API root (real backend, or the fast simulator upstream).

    Raises:
        ConfigError: an unknown task, a missing key variable, a command that cannot start.
    """
    import os

    from looplab.errors import ConfigError

    task = load_task(task_id)
    key = None
    if agent.api_key_env:
        key = os.environ.get(agent.api_key_env)
        if not key:
            raise ConfigError(
                f"environment variable {agent.api_key_env} is empty or not set",
                field=f"wrapped.{agent.name}.api_key_env",
            )
        remember_secret(key)
    workspace = task.build_workspace()
    prompt = task.prompt({})
    values = {"task": task.name, "prompt": prompt, "workspace": str(workspace)}
    command = [_fill(part, values) for part in agent.command]
    stop = threading.Event()
    pace = profile or resolve_profile("fast-750", values=PASS_THROUGH)
    job = asyncio.create_task(
        asyncio.to_thread(
            run_wrapped,
            command,
            pace,
            output=trace,
            upstream=agent.upstream or (None if agent.replay else upstream),
            replay=agent.replay,
            api_key=key,
            agent=agent.name,
            task=task.name,
            cwd=workspace,
            extra_env={**agent.env, "LOOPLAB_TASK": task.name, "LOOPLAB_TASK_PROMPT": prompt},
            timeout_s=agent.timeout_s,
            stop=stop,
            run_id=run_id,
            experiment=experiment,
            cell=cell,
            check=_fill(agent.check, values) if agent.check else None,
        )
    )
    try:
        result = await asyncio.shield(job)
    except asyncio.CancelledError:
        stop.set()  # the command's group is stopped; wait for that before going on
        await asyncio.gather(job, return_exceptions=True)
        await asyncio.to_thread(trace.unlink, missing_ok=True)  # a cut-off run never counts
        raise
    finally:
        shutil.rmtree(workspace.parent, ignore_errors=True)
    end = (await asyncio.to_thread(read_trace, result.trace)).end
    assert end is not None  # run_wrapped writes whole traces
    return end


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text
