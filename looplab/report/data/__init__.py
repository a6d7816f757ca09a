"""Run records and the numbers under every view: per-step rows, statistics, knob and action
tables, exports, synthetic experiments.
"""
