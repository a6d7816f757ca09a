"""Passes when exactly one quote is saved and every answer is the one the prompt gives."""

import json
import sys

try:
    state = json.load(open("app/state.json", encoding="utf-8"))
except FileNotFoundError:
    sys.exit("no app state: no quote was saved")
wanted = {
    "title": "Mr", "first": "Jonas", "last": "Keller", "born": "1988-04-12",
    "email": "jonas.keller@example.com", "phone": "+41 79 123 45 67", "country": "Switzerland",
    "occupation": "Civil engineer", "marital": "Married", "make": "Skoda", "model": "Octavia",
    "year": "2019", "mileage": "10,001 to 15,000", "usage": "Social and commuting",
    "parking": "Garage", "mods": [], "licensed": "14", "claims": "No claims",
    "convictions": "No convictions", "bonus": "8", "plan": "Comprehensive", "excess": "€500",
    "addons": ["Breakdown cover (+€45)"],
}
quotes = [{k: v for k, v in q.items() if k not in ("reference", "price")} for q in state["quotes"]]
if len(quotes) != 1:
    sys.exit(f"expected one saved quote, found {len(quotes)}")
wrong = {k: (quotes[0].get(k), v) for k, v in wanted.items() if quotes[0].get(k) != v}
if wrong or set(quotes[0]) != set(wanted):
    sys.exit(f"the quote differs from the request (found, wanted): {wrong}")
print("ok: the quote is as requested")
