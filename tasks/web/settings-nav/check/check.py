"""Passes when the three requested settings changed and nothing else did."""

import json
import sys

try:
    state = json.load(open("app/state.json", encoding="utf-8"))
except FileNotFoundError:
    sys.exit("no app state: no settings were saved")
wanted = {"digest": "weekly", "sms": False, "mentions": True,
          "timezone": "Europe/Berlin", "language": "en", "week_start": "monday"}
settings = state["settings"]
wrong = {k: settings.get(k) for k, v in wanted.items() if settings.get(k) != v}
if wrong:
    sys.exit(f"settings differ from the request: {wrong}")
print("ok: the settings are as requested")
