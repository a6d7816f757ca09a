"""Model calls with the retry policy of `RetryConfig`, every failed attempt recorded."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from looplab.agents.config import RetryConfig
from looplab.agents.records import AttemptRecord
from looplab.backends.client.client import InstrumentedClient, ModelResponse
from looplab.errors import BackendError

__all__ = ["complete_with_retries", "retry_after_s"]


async def complete_with_retries(
    client: InstrumentedClient,
    messages: list[dict[str, Any]],
    *,
    tools: list[dict[str, Any]],
    policy: RetryConfig,
    attempts: list[AttemptRecord],
    **params: Any,
) -> ModelResponse:
    """Call the model, retrying per `policy`; failed attempts are appended to `attempts`.

    Raises:
        BackendError: the last attempt's error, when it is not retryable or none are left.
    """
    for attempt in range(policy.max_attempts):
        started = time.perf_counter()
        try:
            return await client.complete(messages, tools=tools, **params)
        except BackendError as exc:
            last = attempt == policy.max_attempts - 1
            retryable = _retryable(exc, policy)
            wait = 0.0 if last or not retryable else _delay(exc, policy, attempt)
            attempts.append(
                AttemptRecord(
                    started=started,
                    ended=time.perf_counter(),
                    error=str(exc),
                    status=exc.status,
                    request_id=exc.request_id,
                    wait_s=wait,
                )
            )
            if last or not retryable:
                raise
            await asyncio.sleep(wait)
    raise AssertionError("unreachable: the loop returns or raises")


def _retryable(exc: BackendError, policy: RetryConfig) -> bool:
    if exc.status is None:
        return policy.retry_dropped_streams
    return exc.status in policy.retry_statuses


def _delay(exc: BackendError, policy: RetryConfig, attempt: int) -> float:
    backoff: float = policy.base_delay_s * 2.0**attempt
    return min(policy.max_delay_s, max(retry_after_s(exc) or 0.0, backoff))


def retry_after_s(exc: BackendError) -> float | None:
    """The `retry-after` seconds of the HTTP answer behind `exc`, if it sent one."""
    response = getattr(exc.__cause__, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(str(value)) if value is not None else None
    except ValueError:
        return None
