"""The seeded orders (440, deterministic): imported by the app and by the checker."""

import random

FIRST = "Ana Ben Chloe Dario Elif Farid Greta Hugo Ines Jonas Kira Luca Mara Nils Omar Paula Quinn Rosa Sami Tara Ugo Vera Wim Yara Zeno".split()
LAST = "Ribeiro Okafor Lindqvist Moreau Yilmaz Haddad Novak Brandt Costa Keller Tanaka Rossi Quint Berg Aziz Jensen Walsh Silva Nyberg Olsen".split()
COUNTRIES = "Austria Belgium Canada Denmark Estonia France Germany Ireland Italy Japan Norway Portugal Spain Sweden".split()
STATUSES = [("Delivered", 35), ("Pending", 28), ("Shipped", 15), ("Paid", 12), ("Cancelled", 6), ("Refunded", 4)]
CHOICES = ["Pending", "Paid", "On hold", "Shipped", "Delivered", "Cancelled", "Refunded"]
PRODUCTS = [
    ("Trail running shoes", 8900), ("Merino base layer", 6400), ("Rain shell jacket", 15900),
    ("Insulated bottle", 2900), ("Headlamp 400 lm", 3900), ("Trekking poles (pair)", 7400),
    ("Down vest", 11900), ("Wool socks (3 pairs)", 2400), ("Daypack 22 l", 8400),
    ("Camp stove", 5900), ("Sleeping mat", 9900), ("First-aid kit", 3400),
]


def orders():
    """440 orders, oldest first; numbers and times increase together."""
    rng = random.Random(22)
    weights = [w for _, w in STATUSES]
    result = []
    minute = 0
    for index in range(440):
        minute += rng.randint(40, 400)
        day, rest = divmod(minute, 1440)
        month, day = divmod(day, 28)
        lines = []
        for _ in range(rng.randint(1, 4)):
            name, cents = rng.choice(PRODUCTS)
            lines.append({"product": name, "qty": rng.randint(1, 3), "price_cents": cents})
        result.append(
            {
                "id": f"ORD-{10001 + index}",
                "placed": f"2025-{month + 1:02d}-{day + 1:02d} {rest // 60:02d}:{rest % 60:02d}",
                "customer": f"{rng.choice(FIRST)} {rng.choice(LAST)}",
                "country": rng.choice(COUNTRIES),
                "lines": lines,
                "total_cents": sum(x["qty"] * x["price_cents"] for x in lines) + rng.randint(0, 99),
                "status": rng.choices([s for s, _ in STATUSES], weights)[0],
                "tracking": "",
                "note": "",
            }
        )
    return result
