"""Passes when the oldest Pending order is Shipped (TRK-55120), the Pending order with the
highest total is On hold, and no other order changed."""

import json
import sys

sys.path.insert(0, "app")
from data import orders  # noqa: E402  (the app's own seeded data)

try:
    state = json.load(open("app/state.json", encoding="utf-8"))
except FileNotFoundError:
    sys.exit("no app state: nothing was changed")
wanted = {o["id"]: o for o in orders()}
pending = [o for o in wanted.values() if o["status"] == "Pending"]
oldest = min(pending, key=lambda o: o["placed"])
largest = max(pending, key=lambda o: o["total_cents"])
oldest.update(status="Shipped", tracking="TRK-55120")
largest.update(status="On hold")
found = {o["id"]: o for o in state["orders"]}
problems = [f"{k}: {found.get(k)} != {o}" for k, o in wanted.items() if found.get(k) != o]
problems += [f"unexpected order {k}" for k in found if k not in wanted]
if problems:
    sys.exit("orders differ from the request:\n" + "\n".join(problems[:10]))
print("ok: the orders are as requested")
