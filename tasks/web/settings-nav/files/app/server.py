"""An account area whose settings sit three links deep, split over two tabbed pages."""

from webapp import Response, Store, page, redirect, select, serve

DIGESTS = [("daily", "Daily"), ("weekly", "Weekly"), ("never", "Never")]
ZONES = [("UTC", "UTC"), ("Europe/London", "Europe/London"), ("Europe/Berlin", "Europe/Berlin"),
         ("America/New_York", "America/New_York"), ("Asia/Tokyo", "Asia/Tokyo")]
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français")]
NAV = [("Home", "/"), ("Projects", "/projects"), ("Account", "/account")]
TABS = [("Notifications", "/account/settings/notifications"),
        ("Preferences", "/account/settings/preferences")]
store = Store({
    "settings": {"digest": "daily", "sms": True, "mentions": True,
                 "timezone": "UTC", "language": "en", "week_start": "monday"},
    "saves": 0,
})


def home(request, match):
    body = "<h1>Dashboard</h1><p>Welcome back, Sam. You have 3 open projects.</p>"
    return Response(page("Dashboard", body, NAV))


def projects(request, match):
    items = "".join(f"<li>{p}</li>" for p in ("Apollo", "Borealis", "Cygnus"))
    return Response(page("Projects", f"<h1>Projects</h1><ul>{items}</ul>", NAV))


def account(request, match):
    body = (
        "<h1>Your account</h1><p>Signed in as sam@example.com.</p>"
        '<ul><li><a href="/account/profile">Profile</a></li>'
        '<li><a href="/account/settings">Settings</a></li>'
        '<li><a href="/account/billing">Billing</a></li></ul>'
    )
    return Response(page("Account", body, NAV))


def stub(request, match):
    title = match.group(1).capitalize()
    return Response(page(title, f"<h1>{title}</h1><p>Nothing to change here.</p>", NAV))


def settings(request, match):
    tabs = "".join(f'<li><a href="{href}">{text}</a></li>' for text, href in TABS)
    body = f"<h1>Settings</h1><p>Choose a section.</p><ul>{tabs}</ul>"
    return Response(page("Settings", body, NAV))


def tabbed(title, form, notice=None):
    tabs = "".join(f'<a href="{href}">{text}</a> ' for text, href in TABS)
    body = f'<h1>Settings: {title}</h1><p aria-label="Sections">{tabs}</p>{form}'
    return page(f"Settings - {title}", body, NAV, notice=notice)


def checkbox(label, name, on):
    checked = " checked" if on else ""
    return f'<label><input type="checkbox" name="{name}" value="on"{checked}> {label}</label>'


def notifications(request, match):
    values = store.data["settings"]
    notice = None
    if request.method == "POST":
        digest = request.form("digest")
        if digest in dict(DIGESTS):
            values.update(digest=digest, sms=request.form("sms") == "on",
                          mentions=request.form("mentions") == "on")
            store.data["saves"] += 1
            store.save()
            notice = "Notification settings saved."
    form = (
        '<form method="post">'
        + select("Email digest", "digest", DIGESTS, values["digest"])
        + checkbox("SMS alerts", "sms", values["sms"])
        + checkbox("Email me when I am mentioned", "mentions", values["mentions"])
        + '<button type="submit">Save notifications</button></form>'
    )
    return Response(tabbed("Notifications", form, notice))


def preferences(request, match):
    values = store.data["settings"]
    notice = None
    if request.method == "POST":
        zone, language = request.form("timezone"), request.form("language")
        if zone in dict(ZONES) and language in dict(LANGUAGES):
            values.update(timezone=zone, language=language)
            store.data["saves"] += 1
            store.save()
            notice = "Preferences saved."
    form = (
        '<form method="post">'
        + select("Time zone", "timezone", ZONES, values["timezone"])
        + select("Language", "language", LANGUAGES, values["language"])
        + '<button type="submit">Save preferences</button></form>'
    )
    return Response(tabbed("Preferences", form, notice))


serve(
    [
        ("GET", "/", home),
        ("GET", "/projects", projects),
        ("GET", "/account", account),
        ("GET", "/account/(profile|billing)", stub),
        ("GET", "/account/settings", settings),
        ("GET", "/account/settings/notifications", notifications),
        ("POST", "/account/settings/notifications", notifications),
        ("GET", "/account/settings/preferences", preferences),
        ("POST", "/account/settings/preferences", preferences),
    ],
    store,
)
