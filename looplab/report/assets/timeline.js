/* looplab report: zoom and pan on run timelines (Gantt), zoom on the where-the-time-goes
 * icicles. Both are redrawn from the embedded data (DATA.timelines, DATA.flames), the
 * data the static SVG was drawn from, inside the static chart's own plot area. Figures are
 * set up when they become visible (a run's section opens), so a thousand hidden runs cost
 * nothing until opened. Needs report.js (window.looplab).
 */
(function () {
  "use strict";
  var looplab = window.looplab;
  if (!looplab) return;
  var DATA = looplab.data, el = looplab.el, all = looplab.all;
  var FALLBACK = "#B9B4AA";

  function fmtNum(v) {
    if (v === 0) return "0";
    var m = Math.abs(v);
    if (m >= 1000) return Math.round(v).toLocaleString("en-US");
    if (m >= 10) return v.toFixed(0);
    if (m >= 1) return String(+v.toFixed(1));
    return String(+v.toPrecision(3));
  }
  function fmtS(v) {
    if (Math.abs(v) < 1) return (v * 1000).toFixed(0) + " ms";
    if (Math.abs(v) < 100) return v.toFixed(2) + " s";
    return v.toFixed(0) + " s";
  }
  function ticks(lo, hi, count) {
    var span = hi - lo;
    if (!(span > 0)) return [lo];
    var raw = span / count, power = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * power; })
      .filter(function (s) { return s >= raw; })[0] || raw;
    var out = [];
    for (var v = Math.ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * span; v += step) {
      out.push(+v.toFixed(10));
    }
    return out;
  }
  function svgNode(svg, tag, attrs, text) {
    var node = document.createElementNS(svg.namespaceURI, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    svg.appendChild(node);
    return node;
  }
  function geometry(figure) {
    var svg = figure.querySelector("svg");
    var p = figure.dataset.plot.split(",").map(Number);
    return { svg: svg, left: p[0], top: p[1], right: p[2], bottom: p[3],
      height: svg.viewBox.baseVal.height, title: figure.dataset.title || "" };
  }
  function frame(g, x0, x1, xLabel, rowLabels) {
    var svg = g.svg;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svgNode(svg, "text", { class: "title", x: 8, y: 20 }, g.title);
    var sx = function (v) { return g.left + (v - x0) / (x1 - x0) * (g.right - g.left); };
    ticks(x0, x1, 6).forEach(function (v) {
      svgNode(svg, "line", { class: "grid", x1: sx(v), x2: sx(v), y1: g.top, y2: g.bottom });
      svgNode(svg, "text", { class: "tick", x: sx(v), y: g.bottom + 14, "text-anchor": "middle" },
        fmtNum(v));
    });
    svgNode(svg, "line", { class: "axis", x1: g.left, x2: g.right, y1: g.bottom, y2: g.bottom });
    svgNode(svg, "line", { class: "axis", x1: g.left, x2: g.left, y1: g.top, y2: g.bottom });
    svgNode(svg, "text", { class: "label", x: (g.left + g.right) / 2, y: g.height - 8,
      "text-anchor": "middle" }, xLabel);
    var rowH = (g.bottom - g.top) / rowLabels.length;
    rowLabels.forEach(function (label, i) {
      svgNode(svg, "text", { class: "tick", x: g.left - 6, y: g.top + (i + 0.5) * rowH + 4,
        "text-anchor": "end" }, label);
    });
    return { sx: sx, rowH: rowH };
  }
  function bar(svg, attrs, tipText) {
    var node = svgNode(svg, "rect", attrs);
    node.classList.add("mark");
    node.dataset.tip = tipText;
    return node;
  }

  /* ---- Gantt ------------------------------------------------------------------------------ */
  function ganttRows(figure) {
    var rows = [];
    figure.dataset.gantt.split(" ").forEach(function (anchor) {
      var t = DATA.timelines && DATA.timelines[anchor];
      if (!t) return;
      t.lanes.forEach(function (lane, i) {
        var label = t.labels ? t.labels[i] : t.group + " · " + lane;
        rows.push({ t: t, lane: i, label: label, first: i === 0 });
      });
    });
    return rows;
  }
  function drawGantt(figure, x0, x1) {
    var g = geometry(figure), rows = ganttRows(figure);
    if (!rows.length || !(x1 > x0)) return;
    var f = frame(g, x0, x1, "time since task start (s)", rows.map(function (r) { return r.label; }));
    treeMarks(g, f, rows, x0, x1);
    rows.forEach(function (row, i) {
      var y = g.top + i * f.rowH, color = (DATA.colors || {})[row.t.group] || "#666";
      svgNode(g.svg, "rect", { x: 4, y: y + f.rowH / 2 - 6, width: 6, height: 12, fill: color });
      row.t.bars.forEach(function (b) {
        if (b[0] !== row.lane || b[3] < x0 || b[2] > x1) return;
        var kind = (DATA.kinds || {})[b[1]] || ["", FALLBACK];
        var px0 = f.sx(Math.max(b[2], x0)), px1 = f.sx(Math.min(b[3], x1));
        var attrs = { x: px0.toFixed(2), y: (y + f.rowH * 0.15).toFixed(1),
          width: Math.max(px1 - px0, 0.6).toFixed(2), height: (f.rowH * 0.7).toFixed(1),
          fill: b[5] ? "url(#hatch)" : kind[1], "data-s": b[1], "data-d": +(b[3] - b[2]).toPrecision(4) };
        if (b[5]) attrs.stroke = kind[1];
        bar(g.svg, attrs, b[4] + ": " + fmtS(b[3] - b[2]) + " (at " + b[2].toFixed(2) + " s)");
      });
      if (row.t.task_s >= x0 && row.t.task_s <= x1) {
        svgNode(g.svg, "line", { x1: f.sx(row.t.task_s), x2: f.sx(row.t.task_s), y1: y + f.rowH * 0.05,
          y2: y + f.rowH * 0.95, stroke: color, "stroke-width": 2 });
      }
    });
    figure.dataset.x0 = String(+x0.toPrecision(6));
    figure.dataset.x1 = String(+x1.toPrecision(6));
    var range = figure.querySelector(".ctl .range");
    if (range) range.textContent = "showing " + fmtS(x0) + " – " + fmtS(x1);
    looplab.applyFilters(figure);
  }
  /* sub-runs: a band behind the lanes of those on the critical path, spawn (solid) and
     join (dashed) links between a parent's and a sub-run's first lanes */
  function treeMarks(g, f, rows, x0, x1) {
    rows.forEach(function (row, i) {
      if (!row.first) return;
      var t = row.t;
      (t.critical || []).forEach(function (lane) {
        svgNode(g.svg, "rect", { class: "critical", x: g.left, y: g.top + (i + lane) * f.rowH,
          width: g.right - g.left, height: f.rowH, fill: "#CC79A7", "fill-opacity": ".18" });
      });
      (t.links || []).forEach(function (k) {
        if (k[2] < x0 || k[2] > x1) return;
        var attrs = { class: "link " + k[3], x1: f.sx(k[2]), x2: f.sx(k[2]),
          y1: g.top + (i + k[0] + 0.5) * f.rowH, y2: g.top + (i + k[1] + 0.5) * f.rowH,
          stroke: "#444", "stroke-width": 1.2 };
        if (k[3] === "join") attrs["stroke-dasharray"] = "3 2";
        svgNode(g.svg, "line", attrs);
      });
    });
  }
  function setupGantt(figure) {
    var full = +figure.dataset.x1;
    figure.dataset.x0 = "0";
    figure.dataset.full = String(full);
    var ctl = el("div", { class: "ctl" });
    function view() { return [+figure.dataset.x0, +figure.dataset.x1]; }
    function zoom(center, factor) {
      var v = view(), span = Math.min(full, (v[1] - v[0]) * factor);
      var lo = Math.max(0, Math.min(center - span / 2, full - span));
      drawGantt(figure, lo, lo + span);
    }
    var actions = {
      "zoom in": function () { var v = view(); zoom((v[0] + v[1]) / 2, 0.5); },
      "zoom out": function () { var v = view(); zoom((v[0] + v[1]) / 2, 2); },
      "◀": function () { var v = view(), d = (v[1] - v[0]) * 0.25; zoom((v[0] + v[1]) / 2 - d, 1); },
      "▶": function () { var v = view(), d = (v[1] - v[0]) * 0.25; zoom((v[0] + v[1]) / 2 + d, 1); },
      reset: function () { drawGantt(figure, 0, full); }
    };
    Object.keys(actions).forEach(function (name) {
      var button = el("button", { type: "button", "data-zoom": name }, name);
      button.addEventListener("click", actions[name]);
      ctl.appendChild(button);
    });
    ctl.appendChild(el("span", { class: "range hint" }, "showing 0 ms – " + fmtS(full)));
    figure.insertBefore(ctl, figure.firstChild);
    brush(figure, view, function (lo, hi) { drawGantt(figure, lo, hi); }, zoom, actions.reset);
    drawGantt(figure, 0, full); /* the same picture, now with filterable marks */
  }
  function brush(figure, view, apply, zoom, reset) {
    var svg = figure.querySelector("svg"), start = null, box = null;
    function dataX(event) {
      var g = geometry(figure), pt = svg.createSVGPoint();
      pt.x = event.clientX; pt.y = event.clientY;
      var p = pt.matrixTransform(svg.getScreenCTM().inverse()), v = view();
      var px = Math.max(g.left, Math.min(g.right, p.x));
      return { px: px, x: v[0] + (px - g.left) / (g.right - g.left) * (v[1] - v[0]), g: g };
    }
    svg.addEventListener("mousedown", function (event) {
      if (event.button !== 0) return;
      start = dataX(event);
      box = svgNode(svg, "rect", { class: "brush", x: start.px, y: start.g.top, width: 0,
        height: start.g.bottom - start.g.top });
      event.preventDefault();
    });
    svg.addEventListener("mousemove", function (event) {
      if (!start || !box) return;
      var now = dataX(event);
      box.setAttribute("x", Math.min(now.px, start.px));
      box.setAttribute("width", Math.abs(now.px - start.px));
    });
    window.addEventListener("mouseup", function (event) {
      if (!start) return;
      var end = dataX(event), first = start;
      start = null;
      if (box && box.parentNode) box.parentNode.removeChild(box);
      if (Math.abs(end.px - first.px) > 4) apply(Math.min(first.x, end.x), Math.max(first.x, end.x));
    });
    svg.addEventListener("wheel", function (event) {
      if (!event.ctrlKey && !event.metaKey) return;
      event.preventDefault();
      zoom(dataX(event).x, event.deltaY < 0 ? 0.8 : 1.25);
    }, { passive: false });
    svg.addEventListener("dblclick", reset);
  }
  looplab.derivers.push(function (figure) {
    if (!figure.dataset.gantt) return null;
    var rows = [];
    ganttRows(figure).forEach(function (row) {
      row.t.bars.forEach(function (b) {
        if (b[0] === row.lane) {
          rows.push([row.t.run, row.t.group, row.t.task, row.t.lanes[row.lane], b[1], b[2], b[3],
            +(b[3] - b[2]).toPrecision(6), b[4], b[5] ? true : false]);
        }
      });
    });
    return { title: "timeline bars", rows: rows, columns: ["run_id", "group", "task", "lane", "kind",
      "start_s", "end_s", "duration_s", "label", "estimated"] };
  });

  /* ---- icicle --------------------------------------------------------------------------------- */
  function nodeAt(tree, path) {
    var node = tree;
    path.split(".").slice(1).forEach(function (i) { node = node && node[3][+i]; });
    return node;
  }
  function drawFlame(figure, path) {
    var tree = DATA.flames && DATA.flames[figure.dataset.flame];
    if (!tree) return;
    var focus = nodeAt(tree, path) || tree, g = geometry(figure), depth = path.split(".").length - 1;
    var f = frame(g, 0, focus[1] || 1, "time (s) in " + focus[0], ["run", "phase", "detail"]);
    function box(node, d, x, p) {
      var px0 = f.sx(x), px1 = f.sx(x + node[1]), color = (DATA.boxColors || {})[node[2]] || FALLBACK;
      bar(g.svg, { x: px0.toFixed(2), y: (g.top + d * f.rowH + f.rowH * 0.05).toFixed(1),
        width: Math.max(px1 - px0, 0.6).toFixed(2), height: (f.rowH * 0.9).toFixed(1), fill: color,
        "data-s": node[2], "data-p": p }, node[0] + ": " + fmtS(node[1]) + " (" +
        Math.round(100 * node[1] / (tree[1] || 1)) + "% of the run)");
      if (px1 - px0 > 8 * node[0].length + 60) {
        svgNode(g.svg, "text", { class: "boxlabel", x: px0 + 4, y: g.top + (d + 0.5) * f.rowH + 4 },
          node[0] + " " + fmtS(node[1]));
      }
      var offset = x;
      node[3].forEach(function (child, i) { box(child, d + 1, offset, p + "." + i); offset += child[1]; });
    }
    for (var d = 0; d < depth; d += 1) { /* ancestors span the whole width */
      var ancestorPath = path.split(".").slice(0, d + 1).join(".");
      var a = nodeAt(tree, ancestorPath);
      bar(g.svg, { x: g.left, y: g.top + d * f.rowH + f.rowH * 0.05, width: g.right - g.left,
        height: f.rowH * 0.9, fill: (DATA.boxColors || {})[a[2]] || FALLBACK, "fill-opacity": 0.5,
        "data-s": a[2], "data-p": ancestorPath }, a[0] + ": " + fmtS(a[1]) + " (click to zoom out)");
    }
    box(focus, depth, 0, path);
    figure.dataset.focus = path;
    looplab.applyFilters(figure);
  }
  function setupFlame(figure) {
    var ctl = el("div", { class: "ctl" });
    var reset = el("button", { type: "button", "data-zoom": "reset" }, "reset");
    reset.addEventListener("click", function () { drawFlame(figure, "0"); });
    ctl.appendChild(reset);
    ctl.appendChild(el("span", { class: "hint" }, "click a box to zoom into it"));
    figure.insertBefore(ctl, figure.firstChild);
    figure.querySelector("svg").addEventListener("click", function (event) {
      var target = event.target.closest("[data-p]");
      if (target) drawFlame(figure, target.getAttribute("data-p"));
    });
    drawFlame(figure, "0");
  }
  looplab.derivers.push(function (figure) {
    var tree = figure.dataset.flame && DATA.flames && DATA.flames[figure.dataset.flame];
    if (!tree) return null;
    var rows = [];
    (function walk(node, path, depth) {
      rows.push([path, depth, node[0], node[1], node[2]]);
      node[3].forEach(function (c, i) { walk(c, path + "." + i, depth + 1); });
    })(tree, "0", 0);
    return { title: "where the time goes", columns: ["path", "depth", "name", "seconds", "kind"], rows: rows };
  });

  /* ---- set-up when visible ------------------------------------------------------------------- */
  function setupVisible() {
    all("figure[data-gantt]:not([data-ready]), figure[data-flame]:not([data-ready])").forEach(function (figure) {
      if (figure.offsetParent === null) return;
      figure.setAttribute("data-ready", "");
      var title = figure.querySelector("svg .title");
      figure.dataset.title = title ? title.textContent : "";
      if (figure.dataset.gantt) setupGantt(figure); else setupFlame(figure);
    });
  }
  window.addEventListener("hashchange", setupVisible);
  looplab.setupVisible = setupVisible;
  looplab.start();
  setupVisible();
})();
