"""Serving: the HTTP protocol guard, the precise timer loop and `AppServer`, shared by every
looplab server (`serve`, the proxy, `collect`, the in-process simulator)."""
