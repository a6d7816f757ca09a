"""The console-script entry point: one exit-code policy and one error style.

| what | exit code | printed |
|---|---|---|
| success | 0 | |
| bad input: usage, `ConfigError`, `TraceError`, `PrerequisiteError` | 2 | `error: ...` |
| runtime failure: `BackendError`, `SandboxError`, other `LooplabError` | 1 | `error: ...` |
| a module of a missing extra (`looplab.extras`) | 2 | `error: ... needs looplab[X]` + fix |
| interrupted (Ctrl-C, SIGTERM) | 130 / 143 | `interrupted` and, where it applies, how to resume |
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

import typer
from rich.markup import escape

from looplab.cli.app import build_app, command_named
from looplab.console import err_console
from looplab.errors import (
    ConfigError,
    LooplabError,
    PrerequisiteError,
    TraceError,
)
from looplab.extras import extra_for_module, missing_extra_error

__all__ = ["EXIT_CODES", "exit_code_for", "main"]

EXIT_CODES: dict[type[BaseException], int] = {
    ConfigError: 2,
    TraceError: 2,
    PrerequisiteError: 2,
    LooplabError: 1,
}
"""Most specific class first; the first match wins."""


def exit_code_for(exc: BaseException) -> int:
    """The exit code of a looplab exception (see the table in the module docstring)."""
    for kind, code in EXIT_CODES.items():
        if isinstance(exc, kind):
            return code
    return 1


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be so the same clean-up runs."""


def _sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def main(argv: list[str] | None = None) -> None:
    """Run the CLI with `argv` (default `sys.argv[1:]`) and exit with the policy's code."""
    previous = signal.signal(signal.SIGTERM, _sigterm)
    console = err_console()
    code = 0
    try:
        args = sys.argv[1:] if argv is None else argv
        app = build_app(only=command_named(args))  # inside: a missing extra is mapped below
        result = app(args=args, standalone_mode=False)
        code = result if isinstance(result, int) else 0
    except typer.Exit as exc:
        code = exc.exit_code
    except typer.TyperException as exc:  # usage errors (typer's vendored click)
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        code = 2
    except _Terminated:
        console.print("[yellow]terminated[/]")
        code = 143
    except (typer.Abort, KeyboardInterrupt):
        console.print("[yellow]interrupted[/]")
        code = 130
    except LooplabError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        code = exit_code_for(exc)
    except ModuleNotFoundError as exc:
        extra = extra_for_module(exc.name)
        if extra is None:
            raise
        error = missing_extra_error(extra, "this command", str(exc.name))
        console.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)
        code = 2
    finally:
        signal.signal(signal.SIGTERM, previous)
    sys.exit(code)
