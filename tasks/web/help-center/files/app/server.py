"""A help center (8 sections, 32 topics, 160 articles in a three-level sidebar) and the
workspace settings it documents (their own three-level navigation)."""

from webapp import Response, Store, esc, nested_links, page, redirect, select, serve

SECTIONS = {
    "Getting started": ["Create a workspace", "Invite your team", "Import data", "Mobile apps"],
    "Projects and tasks": ["Boards", "Timelines", "Recurring tasks", "Templates"],
    "Messaging": ["Channels", "Direct messages", "Notifications", "Mentions and reactions"],
    "Files and documents": ["Uploads", "Version history", "Sharing links", "Storage quotas"],
    "Integrations": ["Calendar sync", "Single sign-on apps", "Webhooks", "Public API"],
    "Billing": ["Plans and pricing", "Invoices", "Payment methods", "Tax exemptions"],
    "Administration": ["Members and roles", "Security and compliance", "Data residency", "Workspace deletion"],
    "Troubleshooting": ["Sign-in problems", "Sync errors", "Performance", "Browser support"],
}
PATTERNS = ["Set up {t}", "Manage {t}", "{T}: limits and quotas", "Troubleshoot {t}", "{T}: frequently asked questions"]
RETENTION = [("30", "30 days"), ("90", "90 days"), ("180", "180 days"), ("365", "365 days"),
             ("400", "400 days"), ("730", "730 days")]
PLAN_LIMIT = {"Starter": 30, "Business": 400, "Enterprise": 730}
store = Store({"plan": "Business", "audit": {"retention_days": 90, "read_events": False},
               "sign_in": {"sso_required": False, "session_hours": 24}})


def slug(text):
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-").replace("--", "-")


def articles(topic):
    lower = topic[0].lower() + topic[1:]
    titles = [p.format(t=lower, T=topic) for p in PATTERNS]
    if topic == "Security and compliance":
        titles[2] = "Audit log retention"
    return titles


TREE = [
    (section, f"/help/{slug(section)}", [
        (topic, f"/help/{slug(section)}/{slug(topic)}", [
            (title, f"/help/{slug(section)}/{slug(topic)}/{slug(title)}", []) for title in articles(topic)
        ]) for topic in topics
    ]) for section, topics in SECTIONS.items()
]
SITE = [("Help center", "/help", []), ("Settings", "/settings", []), ("Status", "/soon", []),
        ("Community", "/soon", []), ("Contact support", "/soon", [])]
HEADER = "<header><p>Teamwork Cloud</p>" + nested_links(SITE, "Site") + "</header>"
SIDEBAR = "<aside>" + nested_links(TREE, "Help topics") + "</aside>"
FOOTER = "<footer>" + nested_links([(t, "/soon", []) for t in (
    "About", "Careers", "Blog", "Accessibility", "Privacy policy", "Terms of service",
    "Cookie settings", "Security overview")], "Footer") + "</footer>"


def help_page(title, body):
    return Response(page(title, body, header=HEADER + SIDEBAR, footer=FOOTER))


def filler(title):
    """Paragraphs of an ordinary article (deterministic)."""
    lower = title[0].lower() + title[1:]
    return (
        f"<p>This article explains {esc(lower)} for workspace owners and members. Steps differ "
        "slightly between the web app and the desktop apps; screenshots show the web app.</p>"
        "<h2>Before you begin</h2><p>You need the Admin or Owner role for workspace-wide "
        "changes. Members can change their own preferences only.</p>"
        "<h2>Steps</h2><ol><li>Open Settings from the site menu.</li><li>Choose the section "
        "named in this article.</li><li>Make the change and save it.</li></ol>"
    )


AUDIT = (
    "<p>The audit log records sign-ins, permission changes, exports and deletions. How long "
    "entries are kept depends on the workspace's plan:</p><table><thead><tr><th>Plan</th>"
    "<th>Longest retention</th></tr></thead><tbody><tr><td>Starter</td><td>30 days</td></tr>"
    "<tr><td>Business</td><td>400 days</td></tr><tr><td>Enterprise</td><td>730 days</td></tr>"
    "</tbody></table><p>Set it under Settings, Security, Audit log. Your plan is shown on the "
    "Settings overview. Longer retention than your plan allows is refused.</p>"
)


def help_home(request, match):
    cards = "".join(f'<li><a href="{href}">{esc(name)}</a></li>' for name, href, _ in TREE)
    return help_page("Help center", f"<h1>Help center</h1><p>Browse by section:</p><ul>{cards}</ul>")


def help_node(request, match):
    parts = [p for p in match.group(1).split("/") if p]
    level, trail = TREE, []
    for part in parts:
        node = next((n for n in level if slug(n[0]) == part), None)
        if node is None:
            return Response(page("Not found", "<h1>No such help page</h1>"), 404)
        trail.append(node)
        level = node[2]
    name, _, children = trail[-1]
    crumbs = " › ".join(esc(n[0]) for n in trail[:-1])
    if children:
        items = "".join(f'<li><a href="{href}">{esc(text)}</a></li>' for text, href, _ in children)
        return help_page(name, f"<p>{crumbs}</p><h1>{esc(name)}</h1><ul>{items}</ul>")
    related = "".join(f'<li>{esc(t)}</li>' for t, _, _ in trail[-2][2] if t != name)
    body = AUDIT if name == "Audit log retention" else filler(name)
    return help_page(name, f"<p>{crumbs}</p><article><h1>{esc(name)}</h1>{body}"
                     f"<h2>Related topics</h2><ul>{related}</ul></article>")


SETTINGS_NAV = [
    ("Overview", "/settings", []),
    ("Workspace", "/soon", [("Profile", "/soon", []), ("Branding", "/soon", [])]),
    ("Security", "/settings/security", [("Sign-in", "/settings/security/sign-in", []),
                                        ("Audit log", "/settings/security/audit-log", []),
                                        ("Data export", "/soon", [])]),
    ("Billing", "/soon", [("Plan", "/soon", []), ("Invoices", "/soon", [])]),
    ("Notifications", "/soon", [("Email digests", "/soon", []), ("Mobile push", "/soon", [])]),
    ("Integrations", "/soon", [("Installed apps", "/soon", []), ("Webhooks", "/soon", []),
                               ("API tokens", "/soon", [])]),
    ("Advanced", "/soon", [("Custom fields", "/soon", []), ("Data retention", "/soon", []),
                           ("Danger zone", "/soon", [])]),
]


PEOPLE = [f"{a} {b}" for a in ("Ana", "Ben", "Chloe", "Dario", "Elif", "Farid", "Greta", "Hugo")
          for b in ("Okafor", "Lindqvist", "Moreau", "Novak", "Tanaka", "Walsh", "Costa", "Berg")]
ACTIONS = ["signed in", "exported a board", "changed a role", "created a channel",
           "deleted a file", "invited a member", "changed sharing", "signed out"]


def table(caption, heads, rows):
    head = "".join(f"<th>{h}</th>" for h in heads)
    body = "".join("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<h2>{caption}</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def members():
    roles = ["Owner", "Admin", "Member", "Member", "Member", "Guest"]
    return [(p, f"{p.split()[0].lower()}.{p.split()[1].lower()}@northwind.example",
             roles[i % len(roles)] if i else "Owner") for i, p in enumerate(PEOPLE)]


def events():
    return [(f"2025-06-{30 - i // 3:02d} {9 + i % 9:02d}:{(i * 17) % 60:02d}", PEOPLE[(i * 5) % len(PEOPLE)],
             ACTIONS[(i * 3) % len(ACTIONS)], f"10.0.{i % 7}.{(i * 13) % 250}") for i in range(60)]


def settings_page(title, body, notice=None, errors=()):
    nav = nested_links(SETTINGS_NAV, "Settings sections")
    return Response(page(title, nav + body, header=HEADER, footer=FOOTER, notice=notice, errors=errors))


def overview(request, match):
    return settings_page("Settings", f"<h1>Settings</h1><p>Workspace: Northwind Design. "
                         f"Plan: {store.data['plan']}. Members: 64.</p>"
                         + table("Members", ["Name", "Email", "Role"], members()))


def security(request, match):
    return settings_page("Security settings", "<h1>Security</h1><p>Choose a page: Sign-in, "
                         "Audit log or Data export.</p>"
                         + table("Active sessions", ["Member", "Device", "Last seen"],
                                 [(p, ("Chrome on macOS", "Firefox on Windows", "iOS app")[i % 3],
                                   f"{1 + i % 23} hours ago") for i, p in enumerate(PEOPLE)]))


def audit_form(errors=(), notice=None):
    audit = store.data["audit"]
    checked = " checked" if audit["read_events"] else ""
    body = (
        "<h1>Audit log</h1><form method=post>"
        + select("Keep audit logs for", "retention", RETENTION, str(audit["retention_days"]))
        + f"<label><input type=checkbox name=read_events{checked}> Include read events</label>"
        "<button>Save audit log settings</button></form>"
        + table("Recent events", ["When", "Member", "Action", "IP address"], events())
    )
    return settings_page("Audit log settings", body, notice, errors)


def audit_log(request, match):
    if request.method == "GET":
        return audit_form(notice=request.query.get("notice"))
    days = int(request.form("retention") or 0)
    if days > PLAN_LIMIT[store.data["plan"]]:
        return audit_form([f"The {store.data['plan']} plan keeps audit logs for at most "
                           f"{PLAN_LIMIT[store.data['plan']]} days."])
    store.data["audit"] = {"retention_days": days, "read_events": bool(request.all("read_events"))}
    store.save()
    return redirect("/settings/security/audit-log?notice=Saved audit log settings.")


def soon(request, match):
    return Response(page("Not available", "<h1>Not available in this demo</h1>", header=HEADER))


serve(
    [
        ("GET", "/", lambda r, m: redirect("/help")),
        ("GET", "/help", help_home, True),
        ("GET", r"/help/([a-z0-9/-]+)", help_node, True),
        ("GET", "/settings", overview, True),
        ("GET", "/settings/security", security, True),
        ("GET", "/settings/security/audit-log", audit_log, True),
        ("POST", "/settings/security/audit-log", audit_log, True),
        ("GET", "/soon", soon),
    ],
    store,
    latency_ms=300,
)
