/* looplab dashboard: live refresh (served pages only; a report file never has this).
 * Polls the page's state URL (same origin) and reloads the page when the traces behind
 * it change: every 3 s while the experiment runs, every 5 s otherwise (a run started beside
 * an open page shows within seconds). A badge says so. The page carries the signature it
 * was built from (data-signature), so a change before the first poll still reloads it.
 */
(function () {
  "use strict";
  var node = document.getElementById("live");
  if (!node || !window.fetch) return;
  var url = node.getAttribute("data-state"), last = node.getAttribute("data-signature");
  var badge = document.createElement("div");
  badge.id = "live-badge";
  badge.className = "badge";
  /* in the flow beside the page's title, never over its content (a fixed corner badge
     covered table cells on a phone) */
  badge.style.cssText = "display:inline-block;margin-left:10px;vertical-align:middle;font-weight:normal";
  var title = document.querySelector("h1");
  if (title) title.appendChild(badge); else document.body.insertBefore(badge, document.body.firstChild);
  function schedule(running) {
    badge.textContent = running ? "live: running, refreshing" : "live";
    window.setTimeout(poll, running ? 3000 : 5000);
  }
  function poll() {
    fetch(url, { cache: "no-store", credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (state) {
        if (!state) { schedule(false); return; }
        if (last !== null && state.signature !== last) { window.location.reload(); return; }
        last = state.signature;
        schedule(state.running);
      })
      .catch(function () { badge.textContent = "live: dashboard unreachable"; });
  }
  poll();
})();
