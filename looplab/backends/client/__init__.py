"""The instrumented client: one streamed call assembled and timed."""
