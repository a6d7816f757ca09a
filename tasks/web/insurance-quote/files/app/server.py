"""A five-page car insurance quote (about you, the car, driving history, cover, review) on a
site with a two-level menu, a long footer and a help panel on every page."""

from webapp import Response, Store, esc, nested_links, page, redirect, serve

OCCUPATIONS = sorted([
    "Accountant", "Actor", "Architect", "Baker", "Barista", "Bookkeeper", "Bus driver",
    "Carpenter", "Chef", "Chemist", "Civil engineer", "Cleaner", "Dentist", "Designer",
    "Electrician", "Electrical engineer", "Farmer", "Firefighter", "Florist", "Gardener",
    "Graphic designer", "Hairdresser", "Journalist", "Lawyer", "Librarian", "Mechanic",
    "Mechanical engineer", "Midwife", "Musician", "Nurse", "Optician", "Painter", "Paramedic",
    "Pharmacist", "Photographer", "Physiotherapist", "Pilot", "Plumber", "Police officer",
    "Postal worker", "Project manager", "Psychologist", "Receptionist", "Retired",
    "Sales assistant", "Scientist", "Social worker", "Software developer", "Student",
    "Surveyor", "Tailor", "Teacher", "Translator", "Vet", "Waiter", "Web developer", "Welder",
    "Writer",
])
COUNTRIES = ("Austria Belgium Croatia Czechia Denmark Estonia Finland France Germany Greece "
             "Hungary Iceland Ireland Italy Latvia Liechtenstein Lithuania Luxembourg Malta "
             "Netherlands Norway Poland Portugal Romania Slovakia Slovenia Spain Sweden "
             "Switzerland").split()
MAKES = ("Alfa-Romeo Audi BMW BYD Citroen Cupra Dacia DS Fiat Ford Honda Hyundai Jaguar Jeep Kia "
         "Lancia Land-Rover Lexus Mazda Mercedes-Benz MG Mini Mitsubishi Nissan Opel Peugeot "
         "Polestar Porsche Renault Seat Skoda Smart Subaru Suzuki Tesla Toyota Volkswagen Volvo").split()
ADDONS = ["Breakdown cover (+€45)", "Legal protection (+€29)", "Courtesy car (+€35)",
          "Key cover (+€19)", "Windscreen cover (+€25)", "Personal accident (+€22)",
          "Protected no-claims bonus (+€60)", "European cover (+€30)"]
MODS = ["Alloy wheels", "Lowered suspension", "Engine remap", "Tinted windows", "Body kit",
        "Roof rack", "Tow bar", "Sound system"]
PLANS = ["Third party", "Third party, fire and theft", "Comprehensive"]
FEATURES = ["Damage to other vehicles", "Injury to other people", "Fire damage", "Theft",
            "Damage to your car", "Windscreen repair", "Personal belongings", "Child seats",
            "Vandalism", "Storm and flood", "Animal collision", "Replacement locks",
            "Emergency accommodation", "Medical expenses", "Misfuelling", "Audio equipment"]
# (name, label, kind, options): kind is text/email/tel/date/select/radio/checkboxes
STEPS = [
    ("you", "About you", [
        ("title", "Title", "select", ["Mr", "Ms", "Mrs", "Mx", "Dr"]),
        ("first", "First name", "text", None), ("last", "Last name", "text", None),
        ("born", "Date of birth", "date", None), ("email", "Email", "email", None),
        ("phone", "Phone number", "tel", None),
        ("country", "Country of residence", "select", COUNTRIES),
        ("occupation", "Occupation", "select", OCCUPATIONS),
        ("marital", "Marital status", "radio", ["Single", "Married", "Civil partnership", "Divorced", "Widowed"]),
    ]),
    ("car", "Your car", [
        ("make", "Make", "select", MAKES), ("model", "Model", "text", None),
        ("year", "Year of manufacture", "select", [str(y) for y in range(2025, 1989, -1)]),
        ("mileage", "Kilometres a year", "select", ["Up to 5,000", "5,001 to 10,000", "10,001 to 15,000",
                                                   "15,001 to 20,000", "20,001 to 30,000", "Over 30,000"]),
        ("usage", "Usage", "radio", ["Social only", "Social and commuting", "Business use"]),
        ("parking", "Parked overnight", "radio", ["Garage", "Driveway", "Street", "Car park"]),
        ("mods", "Modifications", "checkboxes", MODS),
    ]),
    ("history", "Driving history", [
        ("licensed", "Years with a full licence", "select", [str(n) for n in range(0, 51)]),
        ("claims", "Claims in the last 5 years", "radio", ["No claims", "One or more claims"]),
        ("convictions", "Motoring convictions in the last 5 years", "radio",
         ["No convictions", "One or more convictions"]),
        ("bonus", "Years of no-claims bonus", "select", [str(n) for n in range(0, 21)]),
    ]),
    ("cover", "Your cover", [
        ("plan", "Plan", "radio", PLANS),
        ("excess", "Voluntary excess", "select", ["€0", "€250", "€500", "€750", "€1,000"]),
        ("addons", "Add-ons", "checkboxes", ADDONS),
    ]),
]
NAMES = [s[0] for s in STEPS]
store = Store({"draft": {}, "quotes": []})
MENU = [(kind, "/soon", [(f"{kind} {x}", "/soon", []) for x in (
    "quote", "renewals", "claims", "cover explained", "discounts", "reviews")])
    for kind in ("Car insurance", "Home insurance", "Travel insurance", "Pet insurance",
                 "Life insurance", "Business insurance")]
HEADER = "<header><p>Harbour Mutual</p>" + nested_links(MENU, "Products") + "</header>"
FOOTER = "<footer>" + nested_links([(t, "/soon", []) for t in (
    "About us", "Careers", "Investors", "Newsroom", "Complaints", "Accessibility", "Privacy notice",
    "Cookie policy", "Terms of business", "Modern slavery statement", "Sitemap", "Contact us",
    "Make a claim", "Renew a policy", "Find a broker", "Fraud prevention")], "Footer") + "</footer>"


def help_panel(title):
    questions = [
        f"Why do you ask for {word} details?" for word in
        ("personal", "car", "history", "cover", "payment", "address", "occupation", "usage",
         "parking", "claims", "licence", "excess", "mileage", "modification", "security",
         "named driver", "contact", "renewal")
    ]
    answers = "".join(
        f"<h3>{esc(q)}</h3><p>Insurers price {esc(title.lower())} risks from these details; "
        "giving them accurately keeps your policy valid when you claim.</p>" for q in questions
    )
    reviews = "".join(
        f"<li>“Quick and clear quote, {n} minutes start to finish.” — customer {n}</li>" for n in range(3, 21)
    )
    return f'<aside aria-label="Help"><h2>Questions about this step</h2>{answers}<h2>Reviews</h2><ul>{reviews}</ul></aside>'


def control(name, label, kind, options, value):
    if kind == "select":
        items = "".join(f'<option{" selected" if o == value else ""}>{esc(o)}</option>' for o in options)
        return f'<label>{label} <select name={name}><option value="">Choose…</option>{items}</select></label>'
    if kind in ("radio", "checkboxes"):
        chosen = value if isinstance(value, list) else [value]
        kind_attr = "radio" if kind == "radio" else "checkbox"
        boxes = "".join(
            f'<label><input type={kind_attr} name={name} value="{esc(o)}"{" checked" if o in chosen else ""}> {esc(o)}</label>'
            for o in options
        )
        return f"<fieldset><legend>{label}</legend>{boxes}</fieldset>"
    return f'<label>{label} <input type={kind} name={name} value="{esc(value or "")}"></label>'


def plans_table():
    rows = "".join(
        f"<tr><td>{f}</td>" + "".join(f"<td>{'Included' if (i + 2) * 3 > j else 'Not included'}</td>"
                                        for i, _ in enumerate(PLANS)) + "</tr>"
        for j, f in enumerate(FEATURES)
    )
    heads = "".join(f"<th>{p}</th>" for p in PLANS)
    return (f"<h2>What each plan covers</h2><table><thead><tr><th>Feature</th>{heads}</tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def form_page(index, errors=()):
    slug, title, fields = STEPS[index]
    draft = store.data["draft"]
    progress = "".join(
        f'<li{" aria-current=step" if n == index else ""}>{esc(t)}</li>' for n, (_, t, _) in enumerate(STEPS)
    ) + "<li>Review</li>"
    controls = "".join(control(n, lab, k, o, draft.get(n)) for n, lab, k, o in fields)
    back = f'<a href="/quote/{NAMES[index - 1]}">Back</a>' if index else ""
    body = (
        f'<ol aria-label="Quote progress">{progress}</ol><h1>{title}</h1>'
        f"<p>Step {index + 1} of {len(STEPS) + 1}</p><form method=post>{controls}"
        f"<button>Continue</button></form>{back}{plans_table() if slug == 'cover' else ''}"
        f"{help_panel(title)}"
    )
    return Response(page(f"{title} — car insurance quote", body, errors=errors, header=HEADER, footer=FOOTER))


def step(request, match):
    index = NAMES.index(match.group(1))
    if request.method == "GET":
        return form_page(index)
    fields = STEPS[index][2]
    answers, errors = {}, []
    for name, label, kind, options in fields:
        if kind == "checkboxes":
            answers[name] = [v for v in request.all(name) if v in options]
            continue
        value = request.form(name)
        if not value or (options and value not in options):
            errors.append(f"{label}: this is required.")
        answers[name] = value
    if errors:
        store.data["draft"].update(answers)
        return form_page(index, errors)
    store.data["draft"].update(answers)
    store.save()
    following = NAMES[index + 1] if index + 1 < len(NAMES) else "review"
    return redirect(f"/quote/{following}")


def price(draft):
    base = {"Third party": 310, "Third party, fire and theft": 380, "Comprehensive": 520}[draft["plan"]]
    discount = min(int(draft["bonus"]), 9) * 0.04 + {"€0": 0, "€250": 0.03, "€500": 0.06,
                                                     "€750": 0.08, "€1,000": 0.1}[draft["excess"]]
    addons = sum(int(a.split("€")[1].rstrip(")")) for a in draft["addons"])
    return round(base * (1 - discount)) + addons


def review(request, match):
    draft = store.data["draft"]
    missing = [n for n in NAMES if not all(f[0] in draft for f in STEPS[NAMES.index(n)][2])]
    if missing:
        return redirect(f"/quote/{missing[0]}")
    if request.method == "POST":
        if not request.all("confirm"):
            return review_page(["Confirm that the details are correct."])
        reference = f"HM-{7301 + len(store.data['quotes'])}"
        store.data["quotes"].append({"reference": reference, "price": price(draft), **draft})
        store.data["draft"] = {}
        store.save()
        return redirect(f"/quote/done/{reference}")
    return review_page()


def review_page(errors=()):
    draft = store.data["draft"]
    rows = "".join(
        f"<dt>{label}</dt><dd>{esc(', '.join(draft[n]) if isinstance(draft[n], list) else draft[n]) or 'None'}"
        f' <a href="/quote/{slug}" aria-label="Change {label.lower()}">Change</a></dd>'
        for slug, _, fields in STEPS for n, label, _, _ in fields
    )
    body = (
        f"<h1>Review your details</h1><p>Step 5 of 5</p><dl>{rows}</dl>"
        + plans_table() + f"<p>Your price: €{price(draft)} a year.</p><form method=post>"
        "<label><input type=checkbox name=confirm> I confirm these details are correct</label>"
        "<button>Save my quote</button></form>" + help_panel("Review")
    )
    return Response(page("Review — car insurance quote", body, errors=errors, header=HEADER, footer=FOOTER))


def done(request, match):
    quote = next((q for q in store.data["quotes"] if q["reference"] == match.group(1)), None)
    if quote is None:
        return redirect("/")
    return Response(page("Quote saved", f"<h1>Quote {quote['reference']} saved</h1><p>€{quote['price']} "
                         "a year. We have emailed you a copy.</p>", header=HEADER, footer=FOOTER))


def start(request, match):
    body = ("<h1>Car insurance</h1><p>Cover from €19 a month. A quote takes about five minutes.</p>"
            '<p><a href="/quote/you">Get a car insurance quote</a></p>' + help_panel("Car insurance"))
    return Response(page("Car insurance — Harbour Mutual", body, header=HEADER, footer=FOOTER))


def soon(request, match):
    return Response(page("Not available", "<h1>Not available in this demo</h1>", header=HEADER))


serve(
    [
        ("GET", "/", start),
        ("GET", "/quote/(you|car|history|cover)", step, True),
        ("POST", "/quote/(you|car|history|cover)", step, True),
        ("GET", "/quote/review", review, True),
        ("POST", "/quote/review", review, True),
        ("GET", r"/quote/done/(HM-\d+)", done),
        ("GET", "/soon", soon),
    ],
    store,
    latency_ms=300,
)
