"""The agents' tools (shell, files, browser, finish), each with its JSON schema; tools return
failures as results, never raise for them.

See README.md in this folder.
"""
