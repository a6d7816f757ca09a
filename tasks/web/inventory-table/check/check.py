"""Passes when the out-of-stock cables hold 25, the VGA adapter is gone, nothing else moved."""

import json
import sys

seed = {i["sku"]: i for i in json.load(open("app/seed.json", encoding="utf-8"))["items"]}
try:
    state = json.load(open("app/state.json", encoding="utf-8"))
except FileNotFoundError:
    sys.exit("no app state: nothing was changed")
wanted = {sku: dict(item) for sku, item in seed.items() if sku != "ad-01"}
for sku, item in wanted.items():
    if item["category"] == "Cables" and item["stock"] == 0:
        item["stock"] = 25
found = {i["sku"]: i for i in state["items"]}
problems = [f"{sku}: {found.get(sku)} != {item}" for sku, item in wanted.items() if found.get(sku) != item]
problems += [f"{sku} should be deleted" for sku in found if sku not in wanted]
if problems:
    sys.exit("inventory differs from the request:\n" + "\n".join(problems))
print("ok: the inventory is as requested")
