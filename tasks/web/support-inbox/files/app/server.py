"""A support inbox rendered in the browser: one HTML shell whose script fetches views, ticket
lists (50 per page, search, result pages) and tickets from a slow JSON API, builds the DOM,
and posts replies and updates back with fetch()."""

from tickets import STATUSES, TEAMS, tickets
from webapp import Response, Store, json_response, nested_links, page, serve

store = Store({"tickets": tickets()})
PER_PAGE = 50
VIEWS = {"open": ("Open tickets", lambda t: t["status"] == "Open"),
         "pending": ("Pending tickets", lambda t: t["status"] == "Pending"),
         "hold": ("Tickets on hold", lambda t: t["status"] == "On hold"),
         "solved": ("Solved tickets", lambda t: t["status"] == "Solved"),
         "unassigned": ("Unassigned tickets", lambda t: t["team"] == "Unassigned" and t["status"] != "Solved"),
         "all": ("All tickets", lambda t: True)}
MENU = [("Inbox", "/", []), ("Customers", "/soon", [("Companies", "/soon", []), ("People", "/soon", [])]),
        ("Knowledge base", "/soon", [("Articles", "/soon", []), ("Macros", "/soon", [])]),
        ("Reports", "/soon", [("Response times", "/soon", []), ("Satisfaction", "/soon", [])]),
        ("Admin", "/soon", [("Teams", "/soon", []), ("Triggers", "/soon", []), ("SLAs", "/soon", [])])]
HEADER = "<header><p>Helpdesk</p>" + nested_links(MENU, "Product") + "</header>"
SHELL = """
<div id=app>
<nav aria-label="Views" id=views><p>Loading views…</p></nav>
<form id=search role=search aria-label="Tickets"><label>Search tickets <input type=search name=q></label>
<button>Search</button></form>
<section id=list aria-label="Ticket list" aria-busy=true><p>Loading tickets…</p></section>
<section id=ticket aria-label="Ticket"></section>
</div>
<script>
var TEAMS = %TEAMS%, STATUSES = %STATUSES%;
var state = {view: 'open', q: '', page: 1};
function $(id) { return document.getElementById(id); }
function esc(s) { return String(s).replace(/[&<>"]/g, function (c) {
  return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; }); }
function getJSON(url) { return fetch(url).then(function (r) { return r.json(); }); }
function loadViews() {
  getJSON('/api/views').then(function (views) {
    $('views').innerHTML = '<ul>' + views.map(function (v) {
      return '<li><a href="#/view/' + v.key + '"' + (v.key === state.view ? ' aria-current="page"' : '') +
        '>' + esc(v.name) + ' (' + v.count + ')</a></li>'; }).join('') + '</ul>';
  });
}
function loadList() {
  $('list').setAttribute('aria-busy', 'true');
  var params = new URLSearchParams({view: state.view, q: state.q, page: state.page});
  getJSON('/api/tickets?' + params).then(function (data) {
    var rows = data.tickets.map(function (t) {
      return '<tr><td><input type="checkbox" aria-label="Select ticket ' + t.id + '"></td>' +
        '<td><a href="#/ticket/' + t.id + '">#' + t.id + ' ' + esc(t.subject) + '</a></td><td>' +
        esc(t.requester) + '</td><td>' + t.status + '</td><td>' + t.priority + '</td><td>' +
        t.team + '</td><td>' + t.updated + '</td></tr>'; }).join('');
    var pages = '';
    for (var n = 1; n <= data.pages; n++) pages += '<button type="button" data-page="' + n + '"' +
      (n === data.page ? ' aria-current="page"' : '') + '>Ticket page ' + n + '</button> ';
    $('list').innerHTML = '<h1>' + esc(data.title) + '</h1><p role="status">' + data.total +
      ' tickets, page ' + data.page + ' of ' + data.pages + '</p><table><thead><tr><th>Select</th>' +
      '<th>Subject</th><th>Requester</th><th>Status</th><th>Priority</th><th>Team</th><th>Updated</th>' +
      '</tr></thead><tbody>' + rows + '</tbody></table><nav aria-label="Ticket pages">' + pages + '</nav>';
    $('list').setAttribute('aria-busy', 'false');
  });
}
function options(list, chosen) {
  return list.map(function (x) { return '<option' + (x === chosen ? ' selected' : '') + '>' + x + '</option>'; }).join('');
}
function showTicket(id, notice) {
  getJSON('/api/tickets/' + id).then(function (t) {
    var thread = t.messages.map(function (m) {
      return '<li><p>' + (m.from === 'customer' ? esc(t.requester) : 'Support agent') + ' wrote:</p><p>' +
        esc(m.body) + '</p></li>'; }).join('');
    $('ticket').innerHTML = (notice ? '<p role="status">' + esc(notice) + '</p>' : '') +
      '<h2>Ticket #' + t.id + ': ' + esc(t.subject) + '</h2><p>From ' + esc(t.requester) + ', ' +
      t.priority + ' priority, updated ' + t.updated + '</p><ol aria-label="Conversation">' + thread + '</ol>' +
      '<form id="update"><label>Assign to team <select name="team">' + options(TEAMS, t.team) +
      '</select></label><label>Ticket status <select name="status">' + options(STATUSES, t.status) +
      '</select></label><label>Reply to customer <textarea name="reply"></textarea></label>' +
      '<button>Send reply and update</button></form>';
    $('update').addEventListener('submit', function (event) {
      event.preventDefault();
      fetch('/api/tickets/' + t.id, {method: 'POST', body: new URLSearchParams(new FormData(event.target))})
        .then(function (r) { return r.json(); })
        .then(function (saved) { showTicket(t.id, saved.notice); loadList(); loadViews(); });
    });
  });
}
function route() {
  var hash = location.hash.slice(2).split('/');
  if (hash[0] === 'ticket') { showTicket(hash[1]); return; }
  if (hash[0] === 'view') { state.view = hash[1]; state.page = 1; state.q = ''; }
  $('ticket').innerHTML = '';
  loadViews(); loadList();
}
$('search').addEventListener('submit', function (event) {
  event.preventDefault();
  state.q = new FormData(event.target).get('q'); state.view = 'all'; state.page = 1; loadList();
});
$('list').addEventListener('click', function (event) {
  var button = event.target.closest('button[data-page]');
  if (button) { state.page = Number(button.dataset.page); loadList(); }
});
window.addEventListener('hashchange', route);
route();
</script>
"""


def shell(request, match):
    script = SHELL.replace("%TEAMS%", repr(TEAMS)).replace("%STATUSES%", repr(STATUSES))
    return Response(page("Support inbox", script, header=HEADER))


def api_views(request, match):
    return json_response([{"key": key, "name": name, "count": sum(1 for t in store.data["tickets"] if test(t))}
                          for key, (name, test) in VIEWS.items()])


def api_list(request, match):
    title, test = VIEWS.get(request.query.get("view", "open"), VIEWS["open"])
    text = request.query.get("q", "").strip().lower()
    rows = [t for t in store.data["tickets"] if test(t) and (
        not text or text in t["subject"].lower() or text in t["requester"].lower() or text == str(t["id"]))]
    pages = max(1, -(-len(rows) // PER_PAGE))
    number = min(pages, max(1, int(request.query.get("page", "1") or 1)))
    shown = [{k: v for k, v in t.items() if k != "messages"} for t in rows[(number - 1) * PER_PAGE: number * PER_PAGE]]
    return json_response({"title": f"Search: {text}" if text else title, "total": len(rows),
                          "page": number, "pages": pages, "tickets": shown})


def api_ticket(request, match):
    ticket = next((t for t in store.data["tickets"] if t["id"] == int(match.group(1))), None)
    if ticket is None:
        return json_response({"error": "no such ticket"}, 404)
    if request.method == "POST":
        team, status, reply = request.form("team"), request.form("status"), request.form("reply")
        if team not in TEAMS or status not in STATUSES:
            return json_response({"error": "unknown team or status"}, 400)
        ticket.update(team=team, status=status)
        if reply:
            ticket["messages"].append({"from": "agent", "body": reply})
        store.save()
        return json_response({"notice": f"Ticket #{ticket['id']} updated."})
    return json_response(ticket)


def soon(request, match):
    return Response(page("Not available", "<h1>Not available in this demo</h1>", header=HEADER))


serve(
    [
        ("GET", "/", shell),
        ("GET", "/api/views", api_views, True),
        ("GET", "/api/tickets", api_list, True),
        ("GET", r"/api/tickets/(\d+)", api_ticket, True),
        ("POST", r"/api/tickets/(\d+)", api_ticket, True),
        ("GET", "/soon", soon),
    ],
    store,
    latency_ms=300,
)
