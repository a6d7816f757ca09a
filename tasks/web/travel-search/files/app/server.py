"""A flight search: a search form, a results page built in JavaScript from a slow JSON API
(filters, sort and result pages re-fetch without reloading), and a booking form."""

import re

from flights import AIRLINES, AIRPORTS, FARES, flights
from webapp import (Response, Store, esc, field, json_response, nested_links, page, redirect,
                    select, serve)

store = Store({"bookings": []})
PER_PAGE = 40
PLACES = [(code, f"{name} ({code})") for code, name in sorted(AIRPORTS.items(), key=lambda x: x[1])]
WINDOWS = {"": ("00:00", "24:00"), "morning": ("05:00", "12:00"),
           "afternoon": ("12:00", "18:00"), "evening": ("18:00", "24:00")}
MENU = [("Flights", "/", [("Search flights", "/", []), ("Flight status", "/soon", []),
                          ("Timetables", "/soon", [])]),
        ("Hotels", "/soon", [("City breaks", "/soon", []), ("Beach resorts", "/soon", [])]),
        ("Car hire", "/soon", []), ("Holiday packages", "/soon", []),
        ("My trips", "/soon", [("Manage booking", "/soon", []), ("Check in", "/soon", [])]),
        ("Help", "/soon", [("Baggage", "/soon", []), ("Refunds", "/soon", []),
                           ("Travel documents", "/soon", [])])]
HEADER = "<header><p>Skyway Travel</p>" + nested_links(MENU, "Main menu") + "</header>"
FOOTER = "<footer>" + nested_links([(t, "/soon", []) for t in (
    "About us", "Careers", "Press", "Gift vouchers", "Affiliate programme", "Privacy",
    "Cookies", "Terms and conditions", "Accessibility", "Contact")], "Footer") + "</footer>"
SCRIPT = """
<script>
var form = document.getElementById('filters'), list = document.getElementById('results');
var pageNumber = 1;
function esc(s) { return String(s).replace(/[&<>"]/g, function (c) {
  return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; }); }
function card(f) {
  var fares = FARES.map(function (x) {
    return '<button type="button" data-fare="' + x[0] + '" data-flight="' + f.id + '" aria-label="Choose ' +
      f.id + ' ' + x[1] + '">' + x[1] + ' \\u20ac' + f.prices[x[0]] + '</button>'; }).join(' ');
  var stops = f.stops ? f.stops + ' stop' + (f.stops > 1 ? 's' : '') + ' via ' + f.via : 'Nonstop';
  return '<article aria-label="Flight ' + f.id + '"><h3>' + esc(f.airline) + ' ' + f.id + '</h3>' +
    '<p>' + f.depart + ' \\u2192 ' + f.arrive + ', ' + Math.floor(f.minutes / 60) + ' h ' +
    (f.minutes % 60) + ' min, ' + esc(stops) + '</p><p>' + fares + '</p></article>';
}
function load() {
  var params = new URLSearchParams(new FormData(form));
  params.set('page', pageNumber);
  list.setAttribute('aria-busy', 'true');
  fetch('/api/flights?' + params).then(function (r) { return r.json(); }).then(function (data) {
    var pages = '';
    if (data.page > 1) pages += '<button type="button" data-page="' + (data.page - 1) + '">Previous results page</button> ';
    for (var n = 1; n <= data.pages; n++) pages += '<button type="button" data-page="' + n + '"' +
      (n === data.page ? ' aria-current="page"' : '') + '>Results page ' + n + '</button> ';
    if (data.page < data.pages) pages += '<button type="button" data-page="' + (data.page + 1) + '">Next results page</button>';
    list.innerHTML = '<p role="status">' + data.total + ' flights found, page ' + data.page + ' of ' +
      data.pages + '</p>' + data.flights.map(card).join('') + '<nav aria-label="Result pages">' + pages + '</nav>';
    list.setAttribute('aria-busy', 'false');
  });
}
form.addEventListener('change', function () { pageNumber = 1; load(); });
list.addEventListener('click', function (event) {
  var button = event.target.closest('button');
  if (!button) return;
  if (button.dataset.page) { pageNumber = Number(button.dataset.page); load(); window.scrollTo(0, 0); }
  if (button.dataset.fare) location.href = '/book?' + new URLSearchParams({flight: button.dataset.flight,
    fare: button.dataset.fare, from: ROUTE[0], to: ROUTE[1], date: ROUTE[2]});
});
load();
</script>
"""


def chrome(title, body, errors=(), notice=None):
    return Response(page(title, body, errors=errors, notice=notice, header=HEADER, footer=FOOTER))


def home(request, match):
    body = (
        "<h1>Search flights</h1><form method=get action=/results role=search aria-label=Flights>"
        + select("From", "from", PLACES, "LHR") + select("To", "to", PLACES, "CDG")
        + field("Departure date", "date", "2025-05-01", "date")
        + select("Passengers", "adults", [(str(n), f"{n} adult{'s' if n > 1 else ''}") for n in range(1, 7)], "1")
        + "<button>Search flights</button></form>" + deals()
    )
    return chrome("Search flights", body)


def deals():
    """The home page's deal teasers: every destination from London and from Paris."""
    items = "".join(
        f'<li><a href="/results?from={origin}&amp;to={code}&amp;date=2025-05-01">'
        f"{AIRPORTS[origin]} to {name} from €{39 + (len(name) * 17 + ord(code[0])) % 120}</a>"
        f"<p>Return trips in May and June, {2 + len(name) % 5} airlines.</p></li>"
        for origin in ("LHR", "CDG") for code, name in sorted(AIRPORTS.items()) if code != origin
    )
    return f"<h2>Deals from London and Paris</h2><ul>{items}</ul>"


def route(query):
    origin, destination, date = query.get("from", ""), query.get("to", ""), query.get("date", "")
    if origin not in AIRPORTS or destination not in AIRPORTS or not re.fullmatch(r"\d{4}-\d\d-\d\d", date):
        return None
    return origin, destination, date


def results(request, match):
    found = route(request.query)
    if found is None:
        return chrome("Search flights", "<h1>Choose two airports and a date</h1>", ["Incomplete search."])
    origin, destination, date = found
    airlines = "".join(
        f'<label><input type=checkbox name=airline value="{code}"> {esc(name)}</label>'
        for code, name in sorted(AIRLINES.items(), key=lambda x: x[1])
    )
    hidden = "".join(f'<input type=hidden name={k} value="{v}">' for k, v in
                     (("from", origin), ("to", destination), ("date", date)))
    body = (
        f"<h1>{AIRPORTS[origin]} to {AIRPORTS[destination]}, {date}</h1>"
        f'<form id=filters aria-label="Filter results">{hidden}'
        "<label><input type=checkbox name=nonstop value=1> Nonstop only</label>"
        + select("Departure time", "window", [("", "Any time"), ("morning", "Morning (05:00-12:00)"),
                                              ("afternoon", "Afternoon (12:00-18:00)"),
                                              ("evening", "Evening (18:00-24:00)")])
        + select("Sort by", "sort", [("depart", "Departure, earliest first"),
                                     ("price", "Price, lowest first"),
                                     ("duration", "Duration, shortest first")])
        + f"<fieldset><legend>Airlines</legend>{airlines}</fieldset></form>"
        '<section id=results aria-label="Flights" aria-busy=true><p>Loading flights…</p></section>'
        f"<script>var FARES = {[[k, n] for k, n, _ in FARES]}; var ROUTE = {list(found)};</script>"
        + SCRIPT
    )
    return chrome(f"Flights {origin}-{destination}", body)


def api_flights(request, match):
    found = route(request.query)
    if found is None:
        return json_response({"error": "from, to and date are required"}, 400)
    start, end = WINDOWS.get(request.query.get("window", ""), WINDOWS[""])
    chosen = set(request.query_lists.get("airline", []))
    rows = [f for f in flights(*found) if start <= f["depart"] < end
            and (not request.query.get("nonstop") or f["stops"] == 0)
            and (not chosen or f["id"][:2] in chosen)]
    order = request.query.get("sort", "depart")
    keys = {"price": lambda f: (f["prices"]["light"], f["id"]),
            "duration": lambda f: (f["minutes"], f["id"])}
    rows.sort(key=keys.get(order, lambda f: (f["depart"], f["id"])))
    pages = max(1, -(-len(rows) // PER_PAGE))
    number = min(pages, max(1, int(request.query.get("page", "1") or 1)))
    return json_response({"total": len(rows), "page": number, "pages": pages,
                          "flights": rows[(number - 1) * PER_PAGE: number * PER_PAGE]})


def book(request, match):
    found = route(request.query if request.method == "GET" else {k: request.form(k) for k in ("from", "to", "date")})
    flight_id = request.query.get("flight") or request.form("flight")
    fare = request.query.get("fare") or request.form("fare")
    flight = next((f for f in flights(*found) if f["id"] == flight_id), None) if found else None
    fares = {k: n for k, n, _ in FARES}
    if flight is None or fare not in fares:
        return chrome("Booking", "<h1>That flight is no longer available</h1>")
    errors = []
    if request.method == "POST":
        first, last, email = request.form("first"), request.form("last"), request.form("email")
        if not first or not last:
            errors.append("Enter the passenger's first and last name.")
        if "@" not in email:
            errors.append("Enter a valid email address.")
        if not request.all("rules"):
            errors.append("Accept the fare rules to book.")
        if not errors:
            reference = f"SKY{len(store.data['bookings']) + 4211}"
            store.data["bookings"].append({"reference": reference, "flight": flight_id, "fare": fare,
                                           "from": found[0], "to": found[1], "date": found[2],
                                           "first": first, "last": last, "email": email})
            store.save()
            return redirect(f"/booked/{reference}")
    hidden = "".join(f'<input type=hidden name={k} value="{esc(v)}">' for k, v in (
        ("flight", flight_id), ("fare", fare), ("from", found[0]), ("to", found[1]), ("date", found[2])))
    body = (
        f"<h1>Book {flight['airline']} {flight_id}</h1><p>{AIRPORTS[found[0]]} to {AIRPORTS[found[1]]} "
        f"on {found[2]}, {flight['depart']} → {flight['arrive']}; {fares[fare]}, €{flight['prices'][fare]}.</p>"
        f"<form method=post action=/book>{hidden}<h2>Passenger</h2>"
        + field("First name", "first", request.form("first")) + field("Last name", "last", request.form("last"))
        + field("Email", "email", request.form("email"), "email")
        + "<label><input type=checkbox name=rules> I accept the fare rules</label>"
        "<button>Book flight</button></form>" + seat_map(flight_id)
    )
    return chrome(f"Book {flight_id}", body, errors)


def seat_map(flight_id):
    """The cabin's seats (30 rows of six; which are taken depends on the flight): seats are
    chosen at check-in, the map only shows availability."""
    rows = []
    for number in range(1, 31):
        cells = "".join(
            f"<td>{'taken' if (number * 7 + ord(letter) + ord(flight_id[-1])) % 3 == 0 else 'free'}</td>"
            for letter in "ABCDEF"
        )
        rows.append(f"<tr><th scope=row>Row {number}</th>{cells}</tr>")
    head = "".join(f"<th>{letter}</th>" for letter in "ABCDEF")
    return (
        "<h2>Seat availability (choose at check-in)</h2><table><thead><tr><th>Row</th>"
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def booked(request, match):
    booking = next((b for b in store.data["bookings"] if b["reference"] == match.group(1)), None)
    if booking is None:
        return chrome("Booking", "<h1>No such booking</h1>")
    return chrome("Booking confirmed", f"<h1>Booking confirmed: {booking['reference']}</h1><p>"
                  f"{esc(booking['first'])} {esc(booking['last'])}, flight {booking['flight']} on {booking['date']}.</p>")


def soon(request, match):
    return chrome("Not available", "<h1>Not available in this demo</h1>")


serve(
    [
        ("GET", "/", home),
        ("GET", "/results", results),
        ("GET", "/api/flights", api_flights, True),
        ("GET", "/book", book, True),
        ("POST", "/book", book, True),
        ("GET", r"/booked/(SKY\d+)", booked),
        ("GET", "/soon", soon),
    ],
    store,
    latency_ms=300,
)
