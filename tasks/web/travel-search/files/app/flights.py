"""The flight schedule (deterministic per route and date): imported by the app and checker."""

import random

AIRPORTS = {
    "AMS": "Amsterdam", "ATH": "Athens", "BCN": "Barcelona", "BER": "Berlin", "BRU": "Brussels",
    "BUD": "Budapest", "CDG": "Paris", "CPH": "Copenhagen", "DUB": "Dublin", "EDI": "Edinburgh",
    "FCO": "Rome", "FRA": "Frankfurt", "GVA": "Geneva", "HEL": "Helsinki", "IST": "Istanbul",
    "KRK": "Krakow", "LHR": "London", "LIS": "Lisbon", "LJU": "Ljubljana", "MAD": "Madrid",
    "MAN": "Manchester", "MLA": "Malta", "MUC": "Munich", "MXP": "Milan", "NAP": "Naples",
    "NCE": "Nice", "OPO": "Porto", "OSL": "Oslo", "PMI": "Palma", "PRG": "Prague",
    "RIX": "Riga", "SOF": "Sofia", "STO": "Stockholm", "TLL": "Tallinn", "VIE": "Vienna",
    "VNO": "Vilnius", "WAW": "Warsaw", "ZAG": "Zagreb", "ZRH": "Zurich", "SVQ": "Seville",
}
AIRLINES = {"LX": "Swiss", "TP": "TAP Air Portugal", "LH": "Lufthansa", "AF": "Air France",
            "IB": "Iberia", "KL": "KLM", "U2": "easyJet", "VY": "Vueling", "FR": "Ryanair"}
HUBS = ["FRA", "MUC", "AMS", "CDG", "MAD", "BCN", "VIE", "BRU"]
FARES = [("light", "Economy Light", 1.0), ("classic", "Economy Classic", 1.45), ("flex", "Flex", 2.3)]


def flights(origin, destination, date):
    """Every flight on the route that day (about 300), in departure order."""
    rng = random.Random(f"{origin}-{destination}-{date}")
    found = []
    for index in range(300):
        code = rng.choice(sorted(AIRLINES))
        depart = rng.randint(5 * 60, 22 * 60)
        stops = rng.choices([0, 1, 2], [25, 55, 20])[0]
        duration = 150 + stops * rng.randint(70, 240) + rng.randint(-20, 40)
        base = rng.randint(49, 260) + (0 if stops else 35)
        found.append(
            {
                "id": f"{code}{1000 + index * 7 + rng.randint(0, 6)}",
                "airline": AIRLINES[code],
                "depart": f"{depart // 60:02d}:{depart % 60:02d}",
                "arrive": f"{(depart + duration) // 60 % 24:02d}:{(depart + duration) % 60:02d}",
                "minutes": duration,
                "stops": stops,
                "via": ", ".join(rng.sample(HUBS, stops)),
                "prices": {key: round(base * factor) for key, _, factor in FARES},
            }
        )
    found.sort(key=lambda f: (f["depart"], f["id"]))
    return found
