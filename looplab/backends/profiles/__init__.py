"""Latency profiles: the profile model, presets as data, the timing function, vision token
rules.
"""
