"""The report model: every view's numbers, computed from run records (no rendering)."""
