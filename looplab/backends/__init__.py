"""Inference backends: latency profiles, pacing, the simulated server, the instrumented client.

See README.md in this folder. Nothing here runs at import time.
"""
