"""An order admin: 440 orders in a table (100 per page) with filters, column sort and
paging on the server, a site menu several levels deep, and an edit page per order."""

from data import CHOICES, orders
from webapp import Response, Store, esc, field, nested_links, page, redirect, select, serve

store = Store({"orders": orders()})
PER_PAGE = 100
COLUMNS = [("placed", "Order date"), ("customer", "Customer"), ("total_cents", "Total")]
MENU = [
    ("Dashboard", "/", []),
    ("Orders", "/orders", [("All orders", "/orders", []), ("Drafts", "/soon", []),
                           ("Returns", "/soon", [("Open returns", "/soon", []),
                                                 ("Return reasons", "/soon", [])]),
                           ("Abandoned checkouts", "/soon", [])]),
    ("Catalogue", "/soon", [("Products", "/soon", [("Footwear", "/soon", []),
                                                    ("Clothing", "/soon", []),
                                                    ("Equipment", "/soon", [])]),
                            ("Collections", "/soon", []), ("Inventory", "/soon", []),
                            ("Gift cards", "/soon", [])]),
    ("Customers", "/soon", [("All customers", "/soon", []), ("Segments", "/soon", []),
                            ("Reviews", "/soon", [])]),
    ("Marketing", "/soon", [("Campaigns", "/soon", [("Email", "/soon", []),
                                                    ("Social", "/soon", [])]),
                            ("Discounts", "/soon", []), ("Automations", "/soon", [])]),
    ("Analytics", "/soon", [("Reports", "/soon", [("Sales over time", "/soon", []),
                                                  ("Sales by channel", "/soon", []),
                                                  ("Returning customers", "/soon", [])]),
                            ("Live view", "/soon", [])]),
    ("Settings", "/soon", [("Store details", "/soon", []), ("Payments", "/soon", []),
                           ("Shipping and delivery", "/soon", [("Zones", "/soon", []),
                                                               ("Carriers", "/soon", [])]),
                           ("Taxes", "/soon", []), ("Staff accounts", "/soon", [])]),
]
HEADER = '<header><p>Summit Outdoor — store admin</p>' + nested_links(MENU, "Admin menu") + "</header>"
FOOTER = (
    "<footer>" + nested_links([(t, "/soon", []) for t in (
        "Help centre", "API reference", "System status", "Changelog", "Privacy", "Terms")],
        "Admin footer") + "</footer>"
)


def money(cents):
    return f"€{cents / 100:,.2f}"


def chrome(title, body, notice=None, errors=()):
    return Response(page(title, body, errors=errors, notice=notice, header=HEADER, footer=FOOTER))


def find(order_id):
    return next((o for o in store.data["orders"] if o["id"] == order_id), None)


def query(request):
    status, text = request.query.get("status", ""), request.query.get("q", "").lower()
    sort, direction = request.query.get("sort", "placed"), request.query.get("dir", "desc")
    rows = [
        o for o in store.data["orders"]
        if (not status or o["status"] == status)
        and (not text or text in o["customer"].lower() or text in o["id"].lower())
    ]
    if sort not in dict(COLUMNS):
        sort = "placed"
    rows.sort(key=lambda o: (o[sort], o["id"]), reverse=direction == "desc")
    return rows, {"status": status, "q": request.query.get("q", ""), "sort": sort, "dir": direction}


def link(params, **change):
    merged = {**params, **{k: str(v) for k, v in change.items()}}
    return "/orders?" + "&amp;".join(f"{k}={esc(v)}" for k, v in merged.items() if v)


def header_cell(key, text, params):
    if params["sort"] == key:
        other = "asc" if params["dir"] == "desc" else "desc"
        label = f"Sort by {text.lower()}, {'ascending' if other == 'asc' else 'descending'}"
    else:
        other, label = "asc", f"Sort by {text.lower()}"
    return f'<th><a href="{link(params, sort=key, dir=other, page=1)}" aria-label="{label}">{text}</a></th>'


def row(o):
    items = sum(x["qty"] for x in o["lines"])
    return (
        f'<tr><td><input type="checkbox" aria-label="Select {o["id"]}"></td>'
        f'<td><a href="/orders/{o["id"]}">{o["id"]}</a></td><td>{o["placed"]}</td>'
        f'<td>{esc(o["customer"])}</td><td>{o["country"]}</td><td>{items}</td>'
        f'<td>{money(o["total_cents"])}</td><td>{o["status"]}</td></tr>'
    )


def listing(request, match):
    rows, params = query(request)
    pages = max(1, -(-len(rows) // PER_PAGE))
    number = min(pages, max(1, int(request.query.get("page", "1") or 1)))
    shown = rows[(number - 1) * PER_PAGE : number * PER_PAGE]
    heads = (
        "<th>Select</th><th>Order</th>" + header_cell("placed", "Order date", params)
        + header_cell("customer", "Customer", params) + "<th>Country</th><th>Items</th>"
        + header_cell("total_cents", "Total", params) + "<th>Status</th>"
    )
    table = (
        f"<table><thead><tr>{heads}</tr></thead><tbody>"
        + "".join(row(o) for o in shown) + "</tbody></table>"
    )
    paging = []
    if number > 1:
        paging.append(f'<a href="{link(params, page=number - 1)}">Previous page</a>')
    paging += [
        f'<a href="{link(params, page=n)}"{" aria-current=page" if n == number else ""}>Page {n}</a>'
        for n in range(1, pages + 1)
    ]
    if number < pages:
        paging.append(f'<a href="{link(params, page=number + 1)}">Next page</a>')
    statuses = [("", "All statuses")] + [(s, s) for s in CHOICES]
    body = (
        "<h1>Orders</h1><form method=get action=/orders role=search aria-label=Filters>"
        + field("Customer or order number", "q", params["q"], "search")
        + select("Status", "status", statuses, params["status"])
        + f'<input type=hidden name=sort value="{params["sort"]}"><input type=hidden name=dir value="{params["dir"]}">'
        + "<button>Apply filters</button></form>"
        + f'<p role=status>{len(rows)} orders, page {number} of {pages}</p>{table}'
        + '<nav aria-label="Pagination">' + " ".join(paging) + "</nav>"
    )
    return chrome(f"Orders — page {number}", body, request.query.get("notice"))


EVENTS = [
    "Checkout completed", "Payment authorised", "Fraud check passed", "Confirmation email sent",
    "Inventory reserved", "Address verified", "Packing slip printed", "Customer viewed order",
    "Note added by support", "Carrier rate quoted", "Stock moved to packing", "Reminder email sent",
]
STAFF = ["system", "Ines (support)", "Omar (warehouse)", "Kira (finance)", "automation"]


def history(o):
    """The order's activity log (deterministic per order), newest first."""
    seed = int(o["id"][4:])
    rows = []
    for n in range(56):
        event = EVENTS[(seed * 7 + n * 5) % len(EVENTS)]
        who = STAFF[(seed + n) % len(STAFF)]
        rows.append(f"<tr><td>{o['placed'][:10]} step {56 - n}</td><td>{event}</td><td>{who}</td></tr>")
    return (
        "<h2>Activity</h2><table><thead><tr><th>When</th><th>Event</th><th>By</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def order_page(o, errors=(), notice=None):
    lines = "".join(
        f'<tr><td>{esc(x["product"])}</td><td>{x["qty"]}</td><td>{money(x["price_cents"])}</td></tr>'
        for x in o["lines"]
    )
    body = (
        f'<h1>Order {o["id"]}</h1><p>Placed {o["placed"]} by {esc(o["customer"])} ({o["country"]}); '
        f'total {money(o["total_cents"])}; status {o["status"]}.</p>'
        f"<table><thead><tr><th>Product</th><th>Qty</th><th>Price</th></tr></thead><tbody>{lines}</tbody></table>"
        f'<form method=post action="/orders/{o["id"]}"><h2>Fulfilment</h2>'
        + select("Order status", "status", [(s, s) for s in CHOICES], o["status"])
        + field("Tracking number", "tracking", o["tracking"])
        + f'<label>Internal note <textarea name=note>{esc(o["note"])}</textarea></label>'
        + "<button>Save order</button></form>" + history(o)
    )
    return chrome(f"Order {o['id']}", body, notice, errors)


def edit(request, match):
    o = find(match.group(1))
    if o is None:
        return Response(page("Not found", "<h1>No such order</h1>"), 404)
    if request.method == "GET":
        return order_page(o, notice=request.query.get("notice"))
    status, tracking = request.form("status"), request.form("tracking")
    errors = []
    if status not in CHOICES:
        errors.append("Choose a status from the list.")
    if status == "Shipped" and not tracking:
        errors.append("A shipped order needs a tracking number.")
    if errors:
        return order_page(o, errors)
    o.update(status=status, tracking=tracking, note=request.form("note"))
    store.save()
    return redirect(f"/orders/{o['id']}?notice=Saved order {o['id']}.")


def soon(request, match):
    return chrome("Not available", "<h1>Not available in this demo</h1>")


serve(
    [
        ("GET", "/", lambda r, m: redirect("/orders")),
        ("GET", "/orders", listing, True),
        ("GET", r"/orders/(ORD-\d+)", edit, True),
        ("POST", r"/orders/(ORD-\d+)", edit, True),
        ("GET", "/soon", soon),
    ],
    store,
    latency_ms=300,
)
