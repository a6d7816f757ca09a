"""Traces: the `looplab-2` event schema, reader/writer, scrubbing, importers. See README.md."""
