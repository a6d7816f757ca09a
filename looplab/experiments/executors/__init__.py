"""Where an experiment's cells run: in this process (default) or as Ray tasks.

`config.py` holds `ExecutorConfig` (the `executor:` section of an experiment), `base.py`
the `Executor` protocol and the kind -> implementation registry; see README.md.
"""
