"""looplab: an agent-loop latency lab. See README.md in this folder for the package tour."""

__version__ = "0.1.0"
