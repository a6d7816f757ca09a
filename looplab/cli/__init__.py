"""The `looplab` command line.

`app.py` registers every package's commands by `module:function` reference (`build_app`;
`main` builds the app with just the command it runs, so a command imports its own package
only; `looplab.cli.app.app` is the full app), `options.py` holds
the shared flags (the one CLI dialect), `logs.py` the logging set-up, `main.py` the entry
point and its exit-code policy. Importing this package imports none of them, so a
package's `commands.py` can use `looplab.console` without a cycle.
"""
