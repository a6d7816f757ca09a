"""Experiments: a config becomes a matrix of cells, each cell a run, each run a trace and a row
of the results database; executors, guards and summaries below.

See README.md in this folder.
"""
