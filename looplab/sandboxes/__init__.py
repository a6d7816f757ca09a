"""Where an agent's tools run: the local sandbox (bubblewrap) and the Docker sandbox, held to
one `Sandbox` contract, with the in-sandbox helper that runs commands and every file
operation.

See README.md in this folder (what is isolated and how; nothing left behind).
"""
