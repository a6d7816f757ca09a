"""Signup wizard: account -> profile -> confirm, validated on the server at every step."""

import hashlib
import re

from webapp import Store, field, page, redirect, select, serve, Response

COUNTRIES = [("", "Choose a country"), ("DE", "Germany"), ("FR", "France"),
             ("NL", "Netherlands"), ("GB", "United Kingdom"), ("US", "United States")]
PLANS = [("free", "Free"), ("team", "Team"), ("enterprise", "Enterprise")]
store = Store({"users": [], "draft": {}})


def account_form(errors=(), email=""):
    body = (
        "<h1>Create your account</h1><p>Step 1 of 3: account</p>"
        '<form method="post" action="/signup/account">'
        + field("Email", "email", email, "email")
        + field("Password", "password", "", "password")
        + field("Confirm password", "confirm", "", "password")
        + "<p>At least 10 characters, with a digit and a letter.</p>"
        '<button type="submit">Continue</button></form>'
    )
    return page("Sign up - account", body, errors=errors)


def account(request, match):
    draft = store.data["draft"]
    if request.method == "GET":
        return Response(account_form(email=draft.get("email", "")))
    email, password = request.form("email"), request.form("password")
    errors = []
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", email):
        errors.append("Enter a valid email address.")
    elif any(u["email"] == email for u in store.data["users"]):
        errors.append("An account with this email exists already.")
    if len(password) < 10 or not re.search(r"\d", password) or not re.search(r"[A-Za-z]", password):
        errors.append("The password needs at least 10 characters, a digit and a letter.")
    elif password != request.form("confirm"):
        errors.append("The passwords do not match.")
    if errors:
        return Response(account_form(errors, email), 422)
    draft.clear()
    draft.update(email=email, password_sha256=hashlib.sha256(password.encode()).hexdigest())
    store.save()
    return redirect("/signup/profile")


def profile_form(draft, errors=()):
    radios = "".join(
        f'<label><input type="radio" name="plan" value="{v}"'
        f'{" checked" if draft.get("plan") == v else ""}> {t}</label>'
        for v, t in PLANS
    )
    body = (
        "<h1>Create your account</h1><p>Step 2 of 3: profile</p>"
        '<form method="post" action="/signup/profile">'
        + field("Full name", "name", draft.get("name", ""))
        + select("Country", "country", COUNTRIES, draft.get("country", ""))
        + f"<fieldset><legend>Plan</legend>{radios}</fieldset>"
        '<button type="submit">Continue</button></form>'
    )
    return page("Sign up - profile", body, errors=errors)


def profile(request, match):
    draft = store.data["draft"]
    if "email" not in draft:
        return redirect("/")
    if request.method == "GET":
        return Response(profile_form(draft))
    name, country, plan = request.form("name"), request.form("country"), request.form("plan")
    errors = []
    if len(name.split()) < 2:
        errors.append("Enter your full name (first and last).")
    if country not in dict(COUNTRIES) or not country:
        errors.append("Choose a country.")
    if plan not in dict(PLANS):
        errors.append("Choose a plan.")
    draft.update(name=name, country=country, plan=plan)
    store.save()
    if errors:
        return Response(profile_form(draft, errors), 422)
    return redirect("/signup/confirm")


def confirm_form(draft, errors=()):
    body = (
        "<h1>Create your account</h1><p>Step 3 of 3: confirm</p>"
        f"<dl><dt>Email</dt><dd>{draft['email']}</dd><dt>Name</dt><dd>{draft['name']}</dd>"
        f"<dt>Country</dt><dd>{dict(COUNTRIES)[draft['country']]}</dd>"
        f"<dt>Plan</dt><dd>{dict(PLANS)[draft['plan']]}</dd></dl>"
        '<form method="post" action="/signup/confirm">'
        '<label><input type="checkbox" name="terms" value="yes"> I accept the terms of service</label>'
        '<button type="submit">Create account</button></form>'
    )
    return page("Sign up - confirm", body, errors=errors)


def confirm(request, match):
    draft = store.data["draft"]
    if "plan" not in draft:
        return redirect("/signup/profile")
    if request.method == "GET":
        return Response(confirm_form(draft))
    if request.form("terms") != "yes":
        return Response(confirm_form(draft, ["You must accept the terms of service."]), 422)
    store.data["users"].append(dict(draft, terms=True))
    draft.clear()
    store.save()
    return redirect("/welcome")


def welcome(request, match):
    users = store.data["users"]
    name = users[-1]["name"] if users else "stranger"
    return Response(page("Welcome", f"<h1>Welcome, {name}!</h1><p>Your account is ready.</p>"))


serve(
    [
        ("GET", "/", account),
        ("GET", "/signup/account", account),
        ("POST", "/signup/account", account),
        ("GET", "/signup/profile", profile),
        ("POST", "/signup/profile", profile),
        ("GET", "/signup/confirm", confirm),
        ("POST", "/signup/confirm", confirm),
        ("GET", "/welcome", welcome),
    ],
    store,
)
