"""The `looplab` command line.

`app.py` registers every package's commands (`looplab.cli.app.app`), `options.py` holds
the shared flags (the one CLI dialect), `logs.py` the logging set-up, `main.py` the entry
point and its exit-code policy. Importing this package imports none of them, so a
package's `commands.py` can use `looplab.console` without a cycle.
"""
