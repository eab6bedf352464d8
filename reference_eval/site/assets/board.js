// The board of a cogbench sweep: coverage, health, best settings and significance groups, from data/board.js.
(function () {
  "use strict";
  var B = (window.COGBENCH || {}).board;
  var main = document.getElementById("main");

  function el(tag, attrs) {
    var node = document.createElement(tag);
    for (var key in attrs || {}) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "cls") node.className = attrs[key];
      else if (attrs[key] !== null && attrs[key] !== undefined && attrs[key] !== false) node.setAttribute(key, attrs[key]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  // Numbers are shown as the data gives their text (cogbench/numbers.py's rounding); the page never rounds.
  function labels(cell) { return (cell.labels || []).map(function (l) { return el("span", { cls: "tag", text: l }); }); }
  function cellOf(model, column) {
    return B.cells.filter(function (c) { return c.model === model && c.task + "|" + c.setting === column.key; })[0];
  }
  // A model is complete on a task when every cell of it on that task is complete (done, merged, verified).
  function completeOn(model, task) {
    var mine = B.cells.filter(function (c) { return c.model === model && c.task === task; });
    return mine.length > 0 && mine.every(function (c) { return c.complete; });
  }
  function selectedTasks() {
    return B.tasks.filter(function (t) { var box = document.getElementById("filter-" + t); return box && box.checked; });
  }
  function applyFilter() {
    var tasks = selectedTasks(), shown = 0;
    B.models.forEach(function (model) {
      var keep = tasks.every(function (t) { return completeOn(model, t); });
      if (keep) shown++;
      document.querySelectorAll('tr[data-model="' + CSS.escape(model) + '"]').forEach(function (row) { row.hidden = !keep; });
    });
    document.getElementById("shown-count").textContent =
      shown + " of " + B.models.length + " models" + (tasks.length ? " complete on " + tasks.join(", ") : "");
  }

  function matrix() {
    var head = el("tr", {}, el("th", { scope: "col", text: "Model" }));
    B.columns.forEach(function (c) { head.appendChild(el("th", { scope: "col" }, c.title, el("br"), el("span", { cls: "ci", text: c.setting }))); });
    var body = el("tbody");
    B.models.forEach(function (model) {
      var row = el("tr", { "data-model": model }, el("th", { scope: "row", text: model }));
      B.columns.forEach(function (column) {
        var c = cellOf(model, column);
        if (!c) { row.appendChild(el("td", { cls: "cell", text: "not planned" })); return; }
        var td = el("td", { cls: "cell", "data-cell": c.id, "data-state": c.state },
          el("span", { cls: "state state-" + c.state, text: c.state }), " ",
          el("span", { cls: "items", text: "items " + c.items_t }));
        if (c.complete) {
          td.appendChild(el("div", {}, c.metric_label + ": ", el("strong", { cls: "value", text: c.value.t }),
            c.letters ? el("span", { cls: "letters", text: " " + c.letters }) : null));
          labels(c).forEach(function (l) { td.appendChild(l); });
        } else if (c.note) {
          td.appendChild(el("span", { cls: "why", text: c.note }));
        }
        row.appendChild(td);
      });
      body.appendChild(row);
    });
    return el("table", { id: "matrix" }, el("thead", {}, head), body);
  }

  function healthTable() {
    var names = [["unparsed", "Unparsed"], ["truncated", "Truncated"], ["empty", "Empty replies"], ["refusals", "Refusals"], ["judge_failures", "Judge failures"]];
    var head = el("tr", {}, el("th", { scope: "col", text: "Model" }), el("th", { scope: "col", text: "Task, setting" }),
      el("th", { scope: "col", text: "State" }), el("th", { scope: "col", text: "Answers" }));
    names.forEach(function (n) { head.appendChild(el("th", { scope: "col", text: n[1] })); });
    head.appendChild(el("th", { scope: "col", text: "Latency per query" }));
    var body = el("tbody");
    B.cells.forEach(function (c) {
      var row = el("tr", { "data-model": c.model, "data-cell": c.id }, el("td", { text: c.model }),
        el("td", { text: c.task + ", " + c.setting }), el("td", {}, el("span", { cls: "state state-" + c.state, text: c.state }), labels(c)[0] || null));
      var h = c.health;
      row.appendChild(el("td", { cls: "num", text: h ? String(h.answers) : "n/a" }));
      names.forEach(function (n) { row.appendChild(el("td", { cls: "num", "data-figure": n[0], text: h ? h[n[0]].t : "n/a" })); });
      row.appendChild(el("td", { cls: "num", "data-figure": "latency", text: h ? h.latency_t : "n/a" }));
      body.appendChild(row);
    });
    return el("table", { id: "health-table" }, el("thead", {}, head), body);
  }

  function bestTable() {
    var head = el("tr", {}, el("th", { text: "Model" }), el("th", { text: "Task" }), el("th", { text: "Best setting" }),
      el("th", { text: "Value" }), el("th", { text: "Settings complete" }));
    var body = el("tbody");
    B.best.forEach(function (b) {
      var value = el("td", { cls: "num" }, b.metric_label + ": " + b.value_t);
      (b.labels || []).forEach(function (l) { value.appendChild(el("span", { cls: "tag", text: l })); });
      body.appendChild(el("tr", { "data-model": b.model }, el("td", { text: b.model }), el("td", { text: b.task }),
        el("td", { text: b.setting }), value, el("td", { cls: "num", text: b.complete_of + " of " + b.of })));
    });
    return el("table", { id: "best-table" }, el("thead", {}, head), body);
  }

  function groupsList() {
    var list = el("ul", { id: "groups-list" });
    B.columns.forEach(function (column) {
      var g = B.groups[column.key];
      list.appendChild(el("li", {}, column.title + " (" + column.setting + "): " + (g
        ? g.pairs + " pair(s) of complete cells tested on " + g.metric + "; minimum detectable difference " + g.mdd_t
        : "fewer than two complete cells: no groups")));
    });
    return list;
  }

  function render() {
    if (!B) { main.replaceChildren(el("p", { text: "data/board.js did not load." })); return; }
    var states = Object.keys(B.states).map(function (s) { return B.states[s] + " " + s; }).join(", ");
    var filter = el("fieldset", { cls: "controls", id: "filter" }, el("legend", { text: "Complete on these tasks" }));
    B.tasks.forEach(function (t) {
      var box = el("input", { type: "checkbox", id: "filter-" + t, value: t });
      box.addEventListener("change", applyFilter);
      filter.appendChild(el("label", {}, box, " " + t));
    });
    filter.appendChild(el("span", { id: "shown-count", "aria-live": "polite" }));
    main.replaceChildren(
      el("p", { cls: "note", text: "Sweep " + B.sweep + " on build " + B.build + ": " + B.cells.length + " cells (" + states + ")" +
        (B.limit ? "; limit " + B.limit + " items per task: a value of a subset of the build carries its PARTIAL label" : "") + "." }),
      el("h2", { id: "coverage", text: "Coverage" }),
      el("p", { cls: "note", text: "complete: done, merged and verified (`cogbench verify`); only complete cells are scored. failed-verification: a merged run that does not verify, never scored. Items: done/intended." }),
      filter, matrix(),
      el("h2", { id: "health", text: "Model health" }),
      el("p", { cls: "note", text: "Shares of the scored answers of each complete cell; n/a: not recorded by the run (refusals: only the openai: backend records them) or the cell is not complete." }),
      healthTable(),
      el("h2", { id: "best", text: "Best setting per model" }), bestTable(),
      el("h2", { id: "groups", text: "Significance groups" }),
      el("p", { cls: "rule", text: B.rule + " Over the complete cells of each column only; the letters stand beside each value in the matrix." }),
      groupsList());
    document.getElementById("footer").textContent = "Written by cogbench " + B.version + " (`cogbench report SWEEP_DIR --site DIR`).";
    applyFilter();
  }
  render();
})();
