"""Logging set-up for the command line: readable lines on stderr, JSON lines in a file.

Called once by the root callback (`looplab.cli.app`); importing it configures nothing.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import structlog

from looplab.traces.scrub import Scrubber

__all__ = ["LOG_LEVELS", "configure_logging"]

LOG_LEVELS = ("debug", "info", "warning", "error")
_NOISY = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "uvicorn.access")


def _file_handler(log_file: Path, shared: list[Any]) -> logging.Handler:
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.dict_tracebacks,
                structlog.processors.JSONRenderer(),
            ],
            foreign_pre_chain=shared,
        )
    )
    handler.setLevel(logging.DEBUG)
    return handler


def configure_logging(level: str, log_file: Path | None) -> None:
    """Readable console logs on stderr at `level`; every level as JSON lines in `log_file`."""
    scrubber = Scrubber()
    shared: list[Any] = [
        lambda _logger, _method, event: scrubber.scrub(event),  # no key in any log line
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    console_handler = logging.StreamHandler(sys.stderr)
    console_handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()),
            ],
            foreign_pre_chain=shared,
        )
    )
    console_handler.setLevel(level.upper())
    handlers: list[logging.Handler] = [console_handler]
    if log_file is not None:
        handlers.append(_file_handler(log_file, shared))
    root = logging.getLogger()
    for old in root.handlers:
        old.close()  # a second set-up in one process (tests) must not leak the log file
    root.handlers[:] = handlers
    root.setLevel(logging.DEBUG)
    for noisy in _NOISY:
        logging.getLogger(noisy).setLevel(logging.WARNING)
