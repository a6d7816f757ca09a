"""Traces: the `looplab-1` event schema, reader/writer, scrubbing, importers. See README.md."""
