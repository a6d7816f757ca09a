"""Passes when the audit log keeps 400 days (the Business plan's limit), read events stay
off, and nothing else in the settings changed."""

import json
import sys

try:
    state = json.load(open("app/state.json", encoding="utf-8"))
except FileNotFoundError:
    sys.exit("no app state: nothing was changed")
wanted = {
    "plan": "Business",
    "audit": {"retention_days": 400, "read_events": False},
    "sign_in": {"sso_required": False, "session_hours": 24},
}
if state != wanted:
    sys.exit(f"settings differ from the request: {state} != {wanted}")
print("ok: the audit log keeps 400 days")
