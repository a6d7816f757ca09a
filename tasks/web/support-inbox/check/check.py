"""Passes when ticket #4312 is with Billing, Pending, with the reply appended, and no other
ticket changed."""

import json
import sys

sys.path.insert(0, "app")
from tickets import tickets  # noqa: E402  (the app's own seeded tickets)

REPLY = ("Sorry about the double charge: we have refunded the second payment; expect it within "
         "5 business days.")
try:
    state = json.load(open("app/state.json", encoding="utf-8"))
except FileNotFoundError:
    sys.exit("no app state: nothing was changed")
wanted = {t["id"]: t for t in tickets()}
target = wanted[4312]
target.update(team="Billing", status="Pending")
target["messages"].append({"from": "agent", "body": REPLY})
found = {t["id"]: t for t in state["tickets"]}
problems = [f"#{k}: {found.get(k)} != {t}" for k, t in wanted.items() if found.get(k) != t]
problems += [f"unexpected ticket #{k}" for k in found if k not in wanted]
if problems:
    sys.exit("tickets differ from the request:\n" + "\n".join(problems[:10]))
print("ok: ticket #4312 is as requested")
