"""`looplab collect`: OpenTelemetry traces received over OTLP/HTTP -> looplab traces.

`spans.decode_request` reads a request body (protobuf or JSON) into `Span`s;
`conventions` says which spans are agent runs, model calls and tool calls (GenAI,
OpenInference, OpenLLMetry) and where each field lives; `runs.draft_run` turns one trace's
spans into a `RunDraft` for the importers' `build_run`; `receiver` buffers spans per trace
and serves `POST /v1/traces`; `commands.collect_command` is the CLI.
"""
