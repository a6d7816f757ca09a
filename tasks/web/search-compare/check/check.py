"""Passes when the wishlist holds exactly the cheapest Aero laptop with 16 GB RAM or more."""

import json
import sys

seed = json.load(open("app/seed.json", encoding="utf-8"))
candidates = [p for p in seed["products"] if p["name"].startswith("Aero") and p["ram_gb"] >= 16]
best = min(candidates, key=lambda p: p["price"])["id"]
try:
    state = json.load(open("app/state.json", encoding="utf-8"))
except FileNotFoundError:
    sys.exit("no app state: nothing was added to the wishlist")
if state["wishlist"] != [best]:
    sys.exit(f"wishlist is {state['wishlist']}, expected [{best!r}]")
print("ok: the wishlist holds", best)
