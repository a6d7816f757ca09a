"""`looplab bench`: every benchmark and its helpers (top layer: may use any package)."""
