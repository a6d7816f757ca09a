"""Passes when exactly one account exists, created with the requested details."""

import hashlib
import json
import sys

try:
    state = json.load(open("app/state.json", encoding="utf-8"))
except FileNotFoundError:
    sys.exit("no app state: nothing was submitted")
users = state["users"]
if len(users) != 1:
    sys.exit(f"expected exactly one account, found {len(users)}")
user = users[0]
wanted = {
    "email": "grace@navy.example",
    "password_sha256": hashlib.sha256(b"Cobol-1959-Mark1").hexdigest(),
    "name": "Grace Hopper",
    "country": "NL",
    "plan": "team",
    "terms": True,
}
wrong = {k: user.get(k) for k, v in wanted.items() if user.get(k) != v}
if wrong:
    sys.exit(f"account fields differ from the request: {wrong}")
print("ok: the account exists with the requested details")
