"""Passes when exactly one order was placed, with the requested items, coupon and address."""

import json
import sys

try:
    state = json.load(open("app/state.json", encoding="utf-8"))
except FileNotFoundError:
    sys.exit("no app state: nothing was ordered")
orders = state["orders"]
if len(orders) != 1:
    sys.exit(f"expected exactly one order, found {len(orders)}")
order = orders[0]
wanted = {
    "items": {"mug-blue": 3, "teapot": 1},
    "coupon": "SPRING10",
    "shipping": "express",
    "name": "Ada Lovelace",
    "street": "12 St James's Square",
    "city": "London",
    "postcode": "SW1Y 4JH",
    "total_cents": (3 * 1200 + 4500) * 90 // 100 + 990,
}
wrong = {k: order.get(k) for k, v in wanted.items() if order.get(k) != v}
if wrong:
    sys.exit(f"order fields differ from the request: {wrong}")
print("ok: the order is as requested")
