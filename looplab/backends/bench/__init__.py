"""Benches and load: `looplab bench backend`, the load generators, `looplab demo`."""
