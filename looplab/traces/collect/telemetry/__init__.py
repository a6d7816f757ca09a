"""Coding CLIs' OpenTelemetry events -> runs: one source per CLI (`registry.SOURCES`).

`looplab collect` takes OTLP logs on `/v1/logs`; `EventCollector` groups each source's
events by run (a prompt, a session); a finished group's `draft` goes through the importers'
`build_run`, the one trace builder.
"""
