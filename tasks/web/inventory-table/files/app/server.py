"""An inventory table with a client-side filter, per-row edit pages and deletion."""

import json
import os

from webapp import HERE, Response, Store, esc, field, page, redirect, serve

with open(os.path.join(HERE, "seed.json"), encoding="utf-8") as handle:
    store = Store(json.load(handle))
NAV = [("Inventory", "/")]
FILTER_SCRIPT = """
<script>
document.getElementById('filter').addEventListener('input', function (event) {
  var needle = event.target.value.toLowerCase();
  document.querySelectorAll('tbody tr').forEach(function (row) {
    row.hidden = needle && row.textContent.toLowerCase().indexOf(needle) < 0;
  });
});
</script>
"""


def find(sku):
    return next((item for item in store.data["items"] if item["sku"] == sku), None)


def listing(request, match):
    rows = "".join(
        f"<tr><td>{esc(i['name'])}</td><td>{esc(i['category'])}</td><td>{i['stock']}</td>"
        f"<td>{i['price_cents'] / 100:.2f}</td>"
        f'<td><a href="/item/{i["sku"]}" aria-label="Edit {esc(i["name"])}">Edit</a></td></tr>'
        for i in store.data["items"]
    )
    body = (
        "<h1>Inventory</h1>"
        '<label>Filter items <input type="search" id="filter" autocomplete="off"></label>'
        "<table><thead><tr><th>Item</th><th>Category</th><th>Stock</th><th>Price</th><th></th>"
        f"</tr></thead><tbody>{rows}</tbody></table>{FILTER_SCRIPT}"
    )
    return Response(page("Inventory", body, NAV, notice=request.query.get("notice")))


def edit_form(item, errors=()):
    body = (
        f"<h1>Edit {esc(item['name'])}</h1>"
        f'<form method="post" action="/item/{item["sku"]}">'
        + field("Stock", "stock", item["stock"], "number", min=0)
        + field("Price", "price", f"{item['price_cents'] / 100:.2f}")
        + '<button type="submit">Save item</button></form>'
        f'<form method="get" action="/item/{item["sku"]}/delete">'
        '<button type="submit">Delete item</button></form>'
    )
    return page(f"Edit {item['name']}", body, NAV, errors)


def edit(request, match):
    item = find(match.group(1))
    if item is None:
        return Response(page("Not found", "<h1>No such item</h1>", NAV), 404)
    if request.method == "GET":
        return Response(edit_form(item))
    stock, price = request.form("stock"), request.form("price")
    errors = []
    if not stock.isdigit():
        errors.append("Stock must be a whole number.")
    try:
        cents = round(float(price) * 100)
    except ValueError:
        errors.append("Price must be a number.")
    if errors:
        return Response(edit_form(item, errors), 422)
    item.update(stock=int(stock), price_cents=cents)
    store.save()
    return redirect(f"/?notice=Saved {item['name']}.")


def delete(request, match):
    item = find(match.group(1))
    if item is None:
        return redirect("/")
    if request.method == "GET":
        body = (
            f"<h1>Delete {esc(item['name'])}?</h1><p>This cannot be undone.</p>"
            f'<form method="post"><button type="submit">Yes, delete</button></form>'
            f'<p><a href="/item/{item["sku"]}">No, keep it</a></p>'
        )
        return Response(page("Delete item", body, NAV))
    store.data["items"].remove(item)
    store.save()
    return redirect(f"/?notice=Deleted {item['name']}.")


serve(
    [
        ("GET", "/", listing),
        ("GET", r"/item/([a-z0-9-]+)", edit),
        ("POST", r"/item/([a-z0-9-]+)", edit),
        ("GET", r"/item/([a-z0-9-]+)/delete", delete),
        ("POST", r"/item/([a-z0-9-]+)/delete", delete),
    ],
    store,
)
