"""`main` registers only the command it runs (`looplab.cli.app.command_named`), so a
command starts without importing every other package's commands; `--help`, an unknown word
and the tests' `app` get the full app."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from looplab.cli.app import APPS, COMMANDS, GROUPS, build_app, command_named


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "x.yaml"], "run"),
        (["--no-log-file", "--log-level", "debug", "report", "d"], "report"),
        (["--log-file", "report", "profiles"], "profiles"),  # the value is not the command
        (["bench", "backend"], "bench"),
        (["claims", "check"], "claims"),
        (["--help"], None),
        (["--version"], None),
        ([], None),
        (["nope"], None),
    ],
)
def test_the_command_is_the_first_word_after_the_root_options(
    argv: list[str], expected: str | None
) -> None:
    """Root options and their values are skipped; only our own names count."""
    assert command_named(argv) == expected


def test_a_command_imports_no_other_packages_commands() -> None:
    """`looplab profiles` runs without importing the claims, report or experiments commands."""
    probe = (
        "import sys\n"
        "from looplab.cli.main import main\n"
        "try:\n    main(['--no-log-file', 'profiles'])\n"
        "except SystemExit as exit:\n    assert exit.code == 0, exit.code\n"
        "print(sorted(m for m in sys.modules if m.endswith('.commands')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = done.stdout.strip().splitlines()[-1]
    assert "looplab.backends.commands" in loaded
    for other in ("claims", "report", "experiments", "traces"):
        assert f"looplab.{other}.commands" not in loaded, loaded


@pytest.mark.parametrize("name", [*COMMANDS, *GROUPS, *APPS])
def test_one_command_app_gives_the_same_help(name: str) -> None:
    """A command's `--help` is the same from the one-command app as from the full app."""
    runner = CliRunner()
    alone = runner.invoke(build_app(only=name), [name, "--help"], terminal_width=100)
    full = runner.invoke(build_app(), [name, "--help"], terminal_width=100)
    assert alone.exit_code == full.exit_code == 0, alone.output
    assert alone.output == full.output


def test_the_proxy_starts_without_the_agent_stack() -> None:
    """`looplab proxy` and `wrap` (started about 140 times by the tests) import neither the
    openai SDK nor langgraph: the proxy assembles streams with `client.assembly` alone
    (0.35 s of CPU per start when it came through `client.client`)."""
    probe = (
        "import sys\n"
        "import looplab.backends.proxy.app, looplab.backends.proxy.wrap\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'langgraph'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ("name: x\n", "field 'backends': Field required"),
        ("name: x\nbackends: [{name: fast-750}]\ntasks: [coding/nope]\n", "coding/nope"),
    ],
)
def test_a_refused_run_never_imports_the_agent_stack(
    tmp_path: Path, config: str, said: str
) -> None:
    """`looplab run` checks the config (fields, then tasks and cells) before it imports what
    runs a cell (langgraph, the openai SDK): a refused run costs ~0.35 s of CPU, not 1.3 s."""
    path = tmp_path / "exp.yaml"
    path.write_text(config)
    probe = (
        "import sys\n"
        "from looplab.cli.main import main\n"
        f"try:\n    main(['--no-log-file', 'run', {str(path)!r}])\n"
        "except SystemExit as exit:\n    print('exit', exit.code)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'langgraph'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)  # fmt: skip
    assert said in done.stderr, done.stderr
    assert done.stdout.strip().splitlines()[-2:] == ["exit 2", "[]"], done.stdout
