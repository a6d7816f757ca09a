"""Passes when the one booking is the cheapest Economy Classic nonstop ZRH-LIS flight on
2025-05-14 leaving 12:00-18:00, for Ana Ribeiro."""

import json
import sys

sys.path.insert(0, "app")
from flights import flights  # noqa: E402  (the app's own schedule)

try:
    state = json.load(open("app/state.json", encoding="utf-8"))
except FileNotFoundError:
    sys.exit("no app state: nothing was booked")
fits = [f for f in flights("ZRH", "LIS", "2025-05-14") if f["stops"] == 0 and "12:00" <= f["depart"] < "18:00"]
best = min(fits, key=lambda f: f["prices"]["classic"])
wanted = {"flight": best["id"], "fare": "classic", "from": "ZRH", "to": "LIS", "date": "2025-05-14",
          "first": "Ana", "last": "Ribeiro", "email": "ana.ribeiro@example.com"}
made = [{k: v for k, v in b.items() if k != "reference"} for b in state["bookings"]]
if made != [wanted]:
    sys.exit(f"bookings differ from the request: {made} != [{wanted}]")
print(f"ok: booked {best['id']}")
