"""A small shop: catalog -> cart (quantities, coupon) -> checkout -> order."""

from webapp import Response, Store, esc, field, page, redirect, select, serve

PRODUCTS = {
    "mug-blue": ("Blue mug", 1200),
    "mug-red": ("Red mug", 1200),
    "teapot": ("Cast-iron teapot", 4500),
    "tea-green": ("Green tea, 100 g", 850),
    "strainer": ("Tea strainer", 600),
}
COUPONS = {"SPRING10": 10, "WELCOME5": 5}
SHIPPING = [("standard", "Standard (3-5 days), 4.90"), ("express", "Express (next day), 9.90")]
SHIPPING_CENTS = {"standard": 490, "express": 990}
NAV = [("Shop", "/"), ("Cart", "/cart")]
store = Store({"cart": {}, "coupon": None, "orders": []})


def money(cents):
    return f"{cents / 100:.2f}"


def totals():
    data = store.data
    subtotal = sum(PRODUCTS[k][1] * n for k, n in data["cart"].items())
    discount = subtotal * COUPONS.get(data["coupon"] or "", 0) // 100
    return subtotal, discount


def catalog(request, match):
    rows = "".join(
        f"<tr><td>{esc(name)}</td><td>{money(price)}</td><td>"
        f'<form method="post" action="/cart/add"><input type="hidden" name="sku" value="{sku}">'
        f'<button type="submit" aria-label="Add {esc(name)} to cart">Add to cart</button>'
        "</form></td></tr>"
        for sku, (name, price) in PRODUCTS.items()
    )
    count = sum(store.data["cart"].values())
    body = (
        f"<h1>Tea shop</h1><p>{count} item(s) in your cart.</p>"
        f"<table><tr><th>Product</th><th>Price</th><th></th></tr>{rows}</table>"
    )
    notice = request.query.get("added")
    notice = f"Added {PRODUCTS[notice][0]} to your cart." if notice in PRODUCTS else None
    return Response(page("Tea shop", body, NAV, notice=notice))


def add(request, match):
    sku = request.form("sku")
    if sku in PRODUCTS:
        store.data["cart"][sku] = store.data["cart"].get(sku, 0) + 1
        store.save()
    return redirect(f"/?added={sku}")


def cart_page(errors=(), notice=None):
    data = store.data
    if not data["cart"]:
        return page("Cart", "<h1>Your cart</h1><p>Your cart is empty.</p>", NAV)
    rows = "".join(
        f"<tr><td>{esc(PRODUCTS[sku][0])}</td><td>"
        f'<input type="number" min="0" name="qty-{sku}" value="{n}"'
        f' aria-label="Quantity of {esc(PRODUCTS[sku][0])}"></td>'
        f"<td>{money(PRODUCTS[sku][1] * n)}</td></tr>"
        for sku, n in data["cart"].items()
    )
    subtotal, discount = totals()
    coupon = f" (coupon {data['coupon']})" if data["coupon"] else ""
    body = (
        "<h1>Your cart</h1>"
        '<form method="post" action="/cart/update">'
        f"<table><tr><th>Product</th><th>Quantity</th><th>Amount</th></tr>{rows}</table>"
        '<button type="submit">Update cart</button></form>'
        '<form method="post" action="/cart/coupon">'
        + field("Coupon code", "coupon")
        + '<button type="submit">Apply coupon</button></form>'
        f"<p>Subtotal {money(subtotal)}, discount {money(discount)}{coupon}.</p>"
        '<p><a href="/checkout">Proceed to checkout</a></p>'
    )
    return page("Cart", body, NAV, errors, notice)


def cart(request, match):
    return Response(cart_page())


def update(request, match):
    for sku in list(store.data["cart"]):
        raw = request.form(f"qty-{sku}", "0")
        if not raw.isdigit():
            return Response(cart_page([f"Quantity of {PRODUCTS[sku][0]} must be a number."]), 422)
        if int(raw) == 0:
            del store.data["cart"][sku]
        else:
            store.data["cart"][sku] = int(raw)
    store.save()
    return Response(cart_page(notice="Cart updated."))


def coupon(request, match):
    code = request.form("coupon").upper()
    if code not in COUPONS:
        return Response(cart_page([f"Unknown coupon {code!r}."]), 422)
    store.data["coupon"] = code
    store.save()
    return Response(cart_page(notice=f"Coupon {code} applied: {COUPONS[code]}% off."))


def checkout_page(values, errors=()):
    subtotal, discount = totals()
    body = (
        "<h1>Checkout</h1>"
        f"<p>Items {money(subtotal - discount)} after discount, plus shipping.</p>"
        '<form method="post" action="/checkout">'
        + field("Full name", "name", values.get("name", ""))
        + field("Street address", "street", values.get("street", ""))
        + field("City", "city", values.get("city", ""))
        + field("Postcode", "postcode", values.get("postcode", ""))
        + select("Shipping method", "shipping", SHIPPING, values.get("shipping", "standard"))
        + '<button type="submit">Place order</button></form>'
    )
    return page("Checkout", body, NAV, errors)


def checkout(request, match):
    if not store.data["cart"]:
        return redirect("/cart")
    if request.method == "GET":
        return Response(checkout_page({}))
    values = {k: request.form(k) for k in ("name", "street", "city", "postcode", "shipping")}
    errors = [f"{k.capitalize()} is required." for k, v in values.items() if not v]
    if values["shipping"] not in SHIPPING_CENTS:
        errors.append("Choose a shipping method.")
    if errors:
        return Response(checkout_page(values, errors), 422)
    subtotal, discount = totals()
    order = dict(
        values,
        id=len(store.data["orders"]) + 1,
        items=dict(store.data["cart"]),
        coupon=store.data["coupon"],
        total_cents=subtotal - discount + SHIPPING_CENTS[values["shipping"]],
    )
    store.data["orders"].append(order)
    store.data["cart"], store.data["coupon"] = {}, None
    store.save()
    return redirect(f"/order/{order['id']}")


def order(request, match):
    number = int(match.group(1))
    found = [o for o in store.data["orders"] if o["id"] == number]
    if not found:
        return Response(page("Order", "<h1>No such order</h1>", NAV), 404)
    body = f"<h1>Thank you, order {number} is placed</h1><p>Total {money(found[0]['total_cents'])}.</p>"
    return Response(page("Order placed", body, NAV))


serve(
    [
        ("GET", "/", catalog),
        ("POST", "/cart/add", add),
        ("GET", "/cart", cart),
        ("POST", "/cart/update", update),
        ("POST", "/cart/coupon", coupon),
        ("GET", "/checkout", checkout),
        ("POST", "/checkout", checkout),
        ("GET", r"/order/(\d+)", order),
    ],
    store,
)
