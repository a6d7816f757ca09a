"""What `looplab run` prints while its cells run and when they end: the progress lines,
the knob table, the WebSocket saving, the reference verdict, the closing summary. See
README.md in this folder."""
