"""Exporters: looplab traces -> other tools' formats, one module per format (see README.md).

`otel.export_otel(trace)`: OTLP JSON with the OpenTelemetry GenAI conventions;
`atif.export_atif(trace)`: an ATIF trajectory (Harbor), which `importers/atif.py` reads
back with its times; `mooncake.mooncake_rows(traces)` / `mooncake_sessions`: request rows
or multi-turn sessions for serving benchmarks (AIPerf); `inference_perf.weka_sessions`:
kubernetes-sigs inference-perf session replay input. Each is one `looplab export`
subcommand; nothing is imported here, so a command loads only its own exporter.
"""
