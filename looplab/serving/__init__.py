"""Serving: `AppServer` (bind, start, stop, drain), the HTTP protocol guard, the Host check
and the precise timer loop, shared by every looplab server (`serve`, the proxy, `collect`,
the dashboard, the in-process simulator)."""
