"""The `looplab` command line (`app`) and its entry point (`main`).

`app.py` registers every package's commands, `options.py` holds the shared flags (the one
CLI dialect), `logs.py` the logging set-up, `main.py` the exit-code policy.
"""

from looplab.cli.app import app
from looplab.cli.main import main

__all__ = ["app", "main"]
