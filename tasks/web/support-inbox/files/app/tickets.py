"""The seeded tickets (433, deterministic): imported by the app and by the checker."""

import random

FIRST = "Ana Ben Chloe Dario Elif Farid Hugo Ines Jonas Kira Luca Mara Nils Omar Paula Rosa Sami Tara Vera Yara".split()
LAST = "Okafor Lindqvist Moreau Yilmaz Haddad Brandt Costa Keller Tanaka Rossi Quint Berg Aziz Jensen Walsh Silva".split()
TOPICS = [
    ("Billing", ["Invoice {n} shows the wrong VAT", "Refund for order {n} not received",
                 "Card declined on order {n}", "Question about invoice {n}"]),
    ("Shipping", ["Order {n} has not arrived", "Parcel for order {n} arrived damaged",
                  "Change delivery address for order {n}", "Tracking for order {n} not updating"]),
    ("Technical", ["Cannot sign in since the update", "App crashes when opening order {n}",
                   "Password reset email never arrives", "Two-factor code rejected"]),
    ("Returns", ["Return label for order {n}", "Exchange size for order {n}",
                 "Return of order {n} not processed", "Wrong item in order {n}"]),
]
TEAMS = ["Unassigned", "Billing", "Shipping", "Technical", "Returns"]
STATUSES = ["Open", "Pending", "On hold", "Solved"]
PRIORITIES = ["Low", "Normal", "High", "Urgent"]
FIXED = [
    (3977, "Greta Novak", "Double charge on my card", "Solved", "Billing",
     ["I was charged twice for my March order.", "We refunded the second charge. — Billing"]),
    (4290, "Greta Novak", "Parcel for order 88102 arrived damaged", "Open", "Unassigned",
     ["The box was crushed and one mug is broken."]),
    (4312, "Greta Novak", "Charged twice for order 88213", "Open", "Unassigned",
     ["Hello, my card statement shows order 88213 twice (2 x €64.90).",
      "I only placed one order. Please refund the second payment."]),
]


def tickets():
    """Every ticket, newest first."""
    rng = random.Random(7)
    found = []
    for number in range(3950, 4383):
        team, subjects = rng.choice(TOPICS)
        found.append({
            "id": number,
            "subject": rng.choice(subjects).format(n=rng.randint(80000, 89999)),
            "requester": f"{rng.choice(FIRST)} {rng.choice(LAST)}",
            "status": rng.choices(STATUSES, [45, 20, 8, 27])[0],
            "priority": rng.choices(PRIORITIES, [20, 55, 20, 5])[0],
            "team": rng.choice([team, "Unassigned"]),
            "updated": f"2025-06-{1 + (number - 3950) * 29 // 433:02d} {rng.randint(8, 19):02d}:{rng.randint(0, 59):02d}",
            "messages": [{"from": "customer", "body": f"Hello, {rng.choice(['please help', 'any news?', 'this is urgent', 'thanks in advance'])}."}
                         for _ in range(rng.randint(1, 4))],
        })
    for number, requester, subject, status, team, bodies in FIXED:
        ticket = next(t for t in found if t["id"] == number)
        ticket.update(requester=requester, subject=subject, status=status, team=team, priority="Normal",
                      messages=[{"from": "customer" if i == 0 or "—" not in b else "agent", "body": b}
                                for i, b in enumerate(bodies)])
    found.sort(key=lambda t: (t["updated"], t["id"]), reverse=True)
    return found
