"""Preflight of an experiment's real backends, before anything is written.

`check_backends(experiment)` refuses a run whose `kind: real` backend cannot answer: its
`api_key_env` names an unset (or empty) variable, or nothing answers at its `base_url`
(no connection within `TIMEOUT_S`). Any HTTP answer counts as answering (even 401 or
404: the key and model are the first call's to judge, and `looplab run` says when every
cell ended in a backend error). The error names the field (`backends[1].api_key_env`,
`backends[1].base_url`) and what to do, so a dead endpoint never shows up as a table of
"NOT solved" runs. Simulated backends need nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from looplab.errors import ConfigError

__all__ = ["TIMEOUT_S", "check_backends", "endpoint_answers"]

TIMEOUT_S = 5.0
"""Seconds to wait for a real backend's endpoint to answer (assumed: a loaded local
server answers its model list well within it)."""


def endpoint_answers(base_url: str) -> str | None:
    """None when an HTTP server answers `GET {base_url}/models` (any status), else why not."""
    import httpx

    try:
        httpx.get(base_url.rstrip("/") + "/models", timeout=TIMEOUT_S, trust_env=False)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return None


def check_backends(
    experiment: Any,
    *,
    environ: dict[str, str] | None = None,
    probe: Callable[[str], str | None] = endpoint_answers,
) -> None:
    """Check every `kind: real` backend of `experiment` (module docstring).

    Raises:
        ConfigError: the first backend that cannot answer, naming its field.
    """
    env = os.environ if environ is None else environ
    for index, backend in enumerate(experiment.backends):
        if backend.kind != "real":
            continue
        where = f"backends[{index}] ({backend.name})"
        if backend.api_key_env and not env.get(backend.api_key_env):
            raise ConfigError(
                f"{where}: environment variable {backend.api_key_env} is empty or not set; "
                f"export {backend.api_key_env}=... (the key), or remove api_key_env for an "
                "endpoint without a key",
                field=f"backends[{index}].api_key_env",
            )
        problem = probe(str(backend.base_url))
        if problem is not None:
            raise ConfigError(
                f"{where}: nothing answers at {backend.base_url} ({problem}); start the "
                "server or fix base_url (the API root, e.g. http://127.0.0.1:8000/v1)",
                field=f"backends[{index}].base_url",
            )
