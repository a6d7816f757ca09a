"""Analysis that needs no agent or sandbox: re-timing traces (virtual clock, virtual replay,
sweep), run graphs and the critical path, cost and deadlines.

See README.md in this folder.
"""
