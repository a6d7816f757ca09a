"""What refuses, stops or watches an experiment run: containment, the one-writer lock,
the preflight checks (and `looplab doctor`, their table), real backends answering, a full
disk, SIGTERM, event-loop lag. See README.md in this folder."""
