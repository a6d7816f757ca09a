"""The pacing proxy: any OpenAI-compatible upstream, re-timed to a latency profile.

See README.md in this folder; `looplab proxy`, `looplab wrap`, `looplab bench proxy`.
"""
