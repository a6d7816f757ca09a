/* looplab report: the interactive layer (inlined into the page; no network, no library).
 *
 * Reads the page's embedded JSON (#report-data): the same view data the static SVG charts
 * and tables were drawn from. Without scripts the page is complete; this adds a theme
 * toggle, filters (task, profile, phase, duration), legend toggles, tooltips, sortable
 * tables and CSV/JSON downloads built here as Blob URLs. timeline.js adds zoom and pan.
 *
 * Extension point: window.looplab.enhancers[name] = function (section, data) {...} runs
 * for every <section data-enhance="name"> (a report section registered in sections.py).
 */
(function () {
  "use strict";
  var root = document.documentElement;
  var DATA = {};
  try {
    DATA = JSON.parse(document.getElementById("report-data").textContent);
  } catch (e) {
    DATA = {};
  }
  root.classList.add("js");
  var looplab = (window.looplab = { data: DATA, enhancers: {}, filters: null, onFilter: [] });

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function all(selector, scope) {
    return Array.prototype.slice.call((scope || document).querySelectorAll(selector));
  }
  looplab.el = el;
  looplab.all = all;

  /* ---- theme ------------------------------------------------------------------------ */
  var THEME_KEY = "looplab-theme";
  function storedTheme() {
    try { return window.localStorage.getItem(THEME_KEY); } catch (e) { return null; }
  }
  function setTheme(theme) {
    if (theme) root.setAttribute("data-theme", theme); else root.removeAttribute("data-theme");
    try { window.localStorage.setItem(THEME_KEY, theme || ""); } catch (e) { /* file:// */ }
  }
  function isDark() {
    var theme = root.getAttribute("data-theme");
    if (theme) return theme === "dark";
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  }
  if (storedTheme()) root.setAttribute("data-theme", storedTheme());

  /* ---- tooltip ---------------------------------------------------------------------- */
  var tip = el("div", { id: "tip", role: "tooltip" });
  document.body.appendChild(tip);
  function tipText(node) {
    if (node.dataset && node.dataset.tip) return node.dataset.tip;
    var title = node.querySelector && node.querySelector(":scope > title");
    if (!title) return "";
    node.dataset.tip = title.textContent;
    title.remove(); /* the custom tooltip replaces the native one */
    return node.dataset.tip;
  }
  document.addEventListener("mouseover", function (event) {
    var target = event.target.closest ? event.target.closest("figure.chart .mark") : null;
    var text = target ? tipText(target) : "";
    tip.style.display = text ? "block" : "none";
    tip.textContent = text;
  });
  document.addEventListener("mousemove", function (event) {
    if (tip.style.display !== "block") return;
    var x = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 4);
    tip.style.left = Math.max(0, x) + "px";
    tip.style.top = event.clientY + 16 + "px";
  });

  /* ---- legend toggles --------------------------------------------------------------- */
  function cssValue(value) {
    return window.CSS && CSS.escape ? CSS.escape(value) : value.replace(/["\\]/g, "\\$&");
  }
  function toggleKey(event) {
    var key = event.target.closest ? event.target.closest(".legend .key[data-s]") : null;
    if (!key) return;
    if (event.type === "keydown") {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();  /* Space would scroll the page */
    }
    var figure = key.closest("figure");
    var off = key.classList.toggle("off");
    key.setAttribute("aria-pressed", off ? "false" : "true");
    all('svg [data-s="' + cssValue(key.dataset.s) + '"]', figure).forEach(function (m) {
      m.classList.toggle("off", off);
    });
  }
  document.addEventListener("click", toggleKey);
  document.addEventListener("keydown", toggleKey);

  /* ---- sortable tables ---------------------------------------------------------------- */
  function sortKey(cell) {
    if (!cell) return "";
    var v = cell.getAttribute("data-v");
    if (v !== null && v !== "" && !isNaN(+v)) return +v;
    return cell.textContent.trim().toLowerCase();
  }
  function sortTable(table, th) {
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    all("thead th", table).forEach(function (h) {
      h.classList.remove("asc", "desc");
      if (h.hasAttribute("aria-sort")) h.setAttribute("aria-sort", "none");
    });
    th.classList.add(ascending ? "asc" : "desc");
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = sortKey(a.cells[index]), y = sortKey(b.cells[index]);
      var numeric = typeof x === "number" && typeof y === "number";
      var order = numeric ? x - y : String(x).localeCompare(String(y));
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  /* every sortable header takes focus and says how it sorts (aria-sort); Enter or Space
     sorts it like a click */
  function prepareSortable(scope) {
    all("table.sortable thead th:not([tabindex])", scope).forEach(function (th) {
      if (th.hasAttribute("data-nosort")) return;
      th.setAttribute("tabindex", "0");
      th.setAttribute("aria-sort", "none");
      th.setAttribute("title", "sort by " + (th.getAttribute("aria-label") || th.textContent.trim()) + " (Enter)");
    });
  }
  looplab.prepareSortable = prepareSortable;
  function sortEvent(event) {
    var th = event.target.closest ? event.target.closest("table.sortable thead th") : null;
    if (!th || th.hasAttribute("data-nosort") || (event.target.closest("a, button, input, select"))) return;
    if (event.type === "keydown") {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();  /* Space would scroll the page */
    }
    sortTable(th.closest("table"), th);
  }
  document.addEventListener("click", sortEvent);
  document.addEventListener("keydown", sortEvent);
  prepareSortable(document);

  /* ---- export --------------------------------------------------------------------------- */
  function csvField(value) {
    if (value === null || value === undefined) return "";
    var text = String(value);
    return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }
  function toCsv(table) {
    var lines = [table.columns.map(csvField).join(",")];
    table.rows.forEach(function (row) { lines.push(row.map(csvField).join(",")); });
    return lines.join("\n") + "\n";
  }
  /* figure -> table or null: downloads of charts drawn from per-run data (timeline.js) */
  looplab.derivers = [];
  function tableFor(name, figure) {
    if (DATA.tables && DATA.tables[name]) return DATA.tables[name];
    for (var i = 0; figure && i < looplab.derivers.length; i += 1) {
      var table = looplab.derivers[i](figure);
      if (table) return table;
    }
    return null;
  }
  function download(link, name, format, figure) {
    var table = tableFor(name, figure);
    if (!table) return;
    var text = format === "csv" ? toCsv(table) : JSON.stringify(table, null, 1);
    var type = format === "csv" ? "text/csv" : "application/json";
    var url = URL.createObjectURL(new Blob([text], { type: type + ";charset=utf-8" }));
    link.href = url;
    link.download = name.replace(/[^A-Za-z0-9_.-]+/g, "_") + "." + format;
    window.setTimeout(function () { URL.revokeObjectURL(url); }, 30000);
  }
  function exportLinks(name, figure) {
    var box = el("div", { class: "exports" }, "data: ");
    ["csv", "json"].forEach(function (format) {
      var link = el("a", { href: "#", "data-export-format": format, "data-export-name": name },
        format.toUpperCase());
      link.addEventListener("click", function () { download(link, name, format, figure); });
      box.appendChild(link);
    });
    return box;
  }
  looplab.exportLinks = exportLinks;
  function addExports(scope) {
    all("figure.chart[data-chart]:not([data-exports])", scope).forEach(function (figure) {
      var name = figure.dataset.export || figure.dataset.chart;
      var known = (DATA.tables && DATA.tables[name]) || figure.dataset.gantt || figure.dataset.flame;
      if (!known) return;
      figure.setAttribute("data-exports", "");
      figure.appendChild(exportLinks(name, figure));
    });
    all("table[data-export]:not([data-exports])", scope).forEach(function (table) {
      var name = table.dataset.export;
      if (!tableFor(name)) return;
      table.setAttribute("data-exports", "");
      var wrap = table.parentNode.classList.contains("scroll") ? table.parentNode : table;
      wrap.parentNode.insertBefore(exportLinks(name), wrap.nextSibling);
    });
  }
  looplab.addExports = addExports;

  /* ---- filters ---------------------------------------------------------------------------- */
  var PHASES = {
    ttft: ["ttft", "prefill"], reasoning: ["reasoning"], decode: ["decode"],
    model: ["model"], tools: ["tool", "tools", "act", "page_wait", "observe"], overhead: ["queue", "overhead", "sandbox"]
  };
  var state = { task: "", groups: {}, phases: {}, minDur: 0 };
  looplab.filters = state;
  function groups() { return (DATA.groups || []).map(function (g) { return g.label; }); }
  function tasks() {
    var seen = {};
    ((DATA.tables && DATA.tables.runs && DATA.tables.runs.rows) || []).forEach(function (r) {
      seen[r[2]] = true;
    });
    return Object.keys(seen).sort();
  }
  function hiddenSeries() {
    var hidden = {};
    Object.keys(state.groups).forEach(function (g) { if (!state.groups[g]) hidden[g] = true; });
    Object.keys(state.phases).forEach(function (p) {
      if (!state.phases[p]) PHASES[p].forEach(function (s) { hidden[s] = true; });
    });
    return hidden;
  }
  function applyFilters(scope) {
    var hidden = hiddenSeries();
    all("[data-s]", scope).forEach(function (node) {
      if (node.classList.contains("key")) node.classList.toggle("fdim", !!hidden[node.dataset.s]);
      else node.classList.toggle("fhide", !!hidden[node.dataset.s]);
    });
    all("[data-d]", scope).forEach(function (node) {
      if (+node.dataset.d < state.minDur) node.classList.add("fhide");
    });
    var shown = 0, total = 0;
    all("tr[data-task], tr[data-group]", scope).forEach(function (row) {
      var hide = (state.task && row.dataset.task && row.dataset.task !== state.task) ||
        (row.dataset.group && hidden[row.dataset.group]) ||
        (row.dataset.dur && +row.dataset.dur < state.minDur);
      row.classList.toggle("fhide", !!hide);
      if (row.closest("table.runs-table")) { total += 1; if (!hide) shown += 1; }
    });
    all("th[data-group], td[data-group]", scope).forEach(function (cell) {
      cell.classList.toggle("fhide", !!hidden[cell.dataset.group]);
    });
    var count = document.getElementById("filter-count");
    if (count && !scope && total) {  /* a page without a table of runs counts none */
      count.textContent = shown + " of " + total + " runs shown" + (shown < total
        ? " (filters hide rows and marks; the headline, statistics and claim check stay over all runs)"
        : "");
    }
    looplab.onFilter.forEach(function (fn) { fn(scope); });
  }
  looplab.applyFilters = applyFilters;

  function toolbar() {
    var bar = document.getElementById("toolbar");
    if (!bar) return;
    var theme = el("button", { type: "button", id: "theme-toggle" }, "dark / light");
    theme.addEventListener("click", function () { setTheme(isDark() ? "light" : "dark"); });
    var taskSelect = el("select", { id: "filter-task", "aria-label": "task" });
    taskSelect.appendChild(el("option", { value: "" }, "all tasks"));
    tasks().forEach(function (t) { taskSelect.appendChild(el("option", { value: t }, t)); });
    taskSelect.addEventListener("change", function () { state.task = taskSelect.value; applyFilters(); });
    var groupBox = el("fieldset", { id: "filter-groups" });
    groupBox.appendChild(el("legend", { class: "hint" }, "profiles"));
    groups().forEach(function (g) { groupBox.appendChild(check("group", g, state.groups)); });
    var phaseBox = el("fieldset", { id: "filter-phases" });
    phaseBox.appendChild(el("legend", { class: "hint" }, "phases"));
    Object.keys(PHASES).forEach(function (p) { phaseBox.appendChild(check("phase", p, state.phases)); });
    var minDur = el("input", { type: "number", id: "filter-min", min: "0", step: "0.1",
      value: "0", "aria-label": "minimum duration (s)" });
    minDur.addEventListener("input", function () {
      state.minDur = Math.max(0, +minDur.value || 0);
      all(".fhide[data-d]").forEach(function (n) { n.classList.remove("fhide"); });
      applyFilters();
    });
    var durLabel = el("label", {}, "min duration (s) ");
    durLabel.appendChild(minDur);
    var taskLabel = el("label", {}, "task ");
    taskLabel.appendChild(taskSelect);
    [theme, taskLabel, groupBox, phaseBox, durLabel,
      el("span", { id: "filter-count", class: "hint" })].forEach(function (n) { bar.appendChild(n); });
  }
  function check(kind, name, store) {
    store[name] = true;
    var label = el("label", {});
    var box = el("input", { type: "checkbox", checked: "", "data-filter": kind, value: name });
    box.addEventListener("change", function () { store[name] = box.checked; applyFilters(); });
    label.appendChild(box);
    label.appendChild(document.createTextNode(name));
    return label;
  }

  /* ---- start -------------------------------------------------------------------------------- */
  function enhanceSections() {
    all("section[data-enhance]").forEach(function (section) {
      section.dataset.enhance.split(" ").forEach(function (name) {
        var fn = looplab.enhancers[name];
        if (fn) fn(section, DATA);
      });
    });
  }
  looplab.start = function () {
    toolbar();
    addExports(document);
    enhanceSections();
    applyFilters();
  };
})();
