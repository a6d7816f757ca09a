"""A laptop catalog: search results show name and price; specs only on each product page."""

import json
import os
from urllib.parse import quote

from webapp import HERE, Response, Store, esc, page, redirect, serve

with open(os.path.join(HERE, "seed.json"), encoding="utf-8") as handle:
    store = Store(json.load(handle))
NAV = [("Catalog", "/"), ("Wishlist", "/wishlist")]


def product(pid):
    return next((p for p in store.data["products"] if p["id"] == pid), None)


def search(request, match):
    query = request.query.get("q", "").strip()
    form = (
        '<form method="get" action="/" role="search">'
        f'<label>Search laptops <input type="search" name="q" value="{esc(query)}"></label>'
        '<button type="submit">Search</button></form>'
    )
    found = [p for p in store.data["products"] if query.lower() in p["name"].lower()]
    back = f"?from={quote(query)}" if query else ""
    items = "".join(
        f'<li><a href="/product/{p["id"]}{back}">{esc(p["name"])}</a>, {p["price"]} EUR</li>'
        for p in found
    )
    results = f"<h2>{len(found)} results for {esc(query)}</h2><ul>{items}</ul>" if query else ""
    return Response(page("Laptop catalog", f"<h1>Laptop catalog</h1>{form}{results}", NAV))


def detail(request, match):
    item = product(match.group(1))
    if item is None:
        return Response(page("Not found", "<h1>No such laptop</h1>", NAV), 404)
    origin = request.query.get("from")
    back = f'<p><a href="/?q={quote(origin)}">Back to results</a></p>' if origin else ""
    body = (
        f"<h1>{esc(item['name'])}</h1>"
        f"<table><tr><th>Price</th><td>{item['price']} EUR</td></tr>"
        f"<tr><th>Memory</th><td>{item['ram_gb']} GB</td></tr>"
        f"<tr><th>Weight</th><td>{item['weight_kg']} kg</td></tr></table>"
        f'<form method="post" action="/wishlist"><input type="hidden" name="id" value="{item["id"]}">'
        '<button type="submit">Add to wishlist</button></form>'
        f"{back}"
    )
    return Response(page(item["name"], body, NAV))


def wishlist(request, match):
    if request.method == "POST":
        pid = request.form("id")
        if product(pid) and pid not in store.data["wishlist"]:
            store.data["wishlist"].append(pid)
            store.save()
        return redirect("/wishlist")
    items = "".join(f"<li>{esc(product(pid)['name'])}</li>" for pid in store.data["wishlist"])
    body = f"<h1>Your wishlist</h1><ul>{items}</ul>" if items else "<h1>Your wishlist is empty</h1>"
    return Response(page("Wishlist", body, NAV))


serve(
    [
        ("GET", "/", search),
        ("GET", r"/product/([a-z0-9-]+)", detail),
        ("GET", "/wishlist", wishlist),
        ("POST", "/wishlist", wishlist),
    ],
    store,
)
