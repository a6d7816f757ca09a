"""Inference backends, by role: the simulated OpenAI-compatible server (`simulator/`), its
scripted, replay and workload policies (`policies/`), the pacing proxy and `wrap`
(`proxy/`), and the instrumented client (`client/`). Latency profiles and the call-timing
formula they all share live in `looplab.latency`.

See README.md in this folder. Nothing here runs at import time.
"""
