// The cogbench site: a leaderboard with significance groups and an item viewer, from data/*.js (no server).
(function () {
  "use strict";
  var DATA = window.COGBENCH || {};
  var S = DATA.site;
  var main = document.getElementById("main");
  var state = { list: null }; // the item list built for one task, kept while its filters change

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
  // Every number is shown as the data gives its text (t, ci_t, ..._t): written by cogbench's one rounding rule
  // (cogbench/numbers.py, as the command line and report.md show them); the page never rounds a number itself.
  function txt(t) { return t === null || t === undefined ? "-" : t; }
  function params() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    return p;
  }
  function hashOf(obj) {
    var p = new URLSearchParams();
    for (var k in obj) if (obj[k] !== undefined && obj[k] !== null && obj[k] !== "" && obj[k] !== false) p.set(k, obj[k] === true ? "1" : obj[k]);
    return "#" + p.toString();
  }
  function run(i) { return S.runs[i]; }
  function taskOf(name) { return S.tasks.filter(function (t) { return t.task === name; })[0]; }

  function loadItems(task, done) {
    var key = "items-" + task;
    if (DATA[key]) return done(DATA[key]);
    var tag = el("script", { src: "data/" + key + ".js" });
    tag.onload = function () { done(DATA[key]); };
    tag.onerror = function () { main.replaceChildren(el("p", { text: "Could not load data/" + key + ".js" })); };
    document.body.appendChild(tag);
  }

  // --- leaderboard ---------------------------------------------------------------
  function bar(cell) {
    var b = el("div", { cls: "bar", "aria-hidden": "true" });
    if (cell.ci) b.appendChild(el("span", { cls: "ci-span", style: "left:" + cell.ci[0] * 1.6 + "px;width:" + Math.max(1, (cell.ci[1] - cell.ci[0]) * 1.6) + "px" }));
    if (cell.v !== null && cell.v !== undefined) b.appendChild(el("span", { cls: "point", style: "left:" + Math.min(158, cell.v * 1.6) + "px" }));
    return b;
  }
  function metricTable(task, metric, col) {
    var rows = metric.rows.slice().sort(function (a, b) {
      var ra = a.rank_set === null ? 1 : 0, rb = b.rank_set === null ? 1 : 0;
      var va = (a.cells[col] || {}).v, vb = (b.cells[col] || {}).v;
      return ra - rb || (a.rank_set || 0) - (b.rank_set || 0) || (vb === null || vb === undefined ? -1 : vb) - (va === null || va === undefined ? -1 : va);
    });
    var head = el("tr", {}, el("th", { scope: "col", text: "Group" }), el("th", { scope: "col", text: "Run" }), el("th", { scope: "col", text: "Source" }),
      el("th", { scope: "col", text: "Value [95% interval]" }), el("th", { scope: "col", text: "Interval (0–100)" }), el("th", { scope: "col", text: "Images" }),
      el("th", { scope: "col", text: "Judge" }), el("th", { scope: "col", text: "Mode" }), el("th", { scope: "col", text: "Thinking" }),
      el("th", { scope: "col", text: "Build" }), el("th", { scope: "col", text: "Coverage / not ranked" }));
    var body = el("tbody");
    rows.forEach(function (row) {
      var r = run(row.run), cell = row.cells[col] || { v: null };
      var link = cell.v === null || cell.v === undefined ? el("span", { text: "-" }) :
        el("a", { cls: "cell-link", href: hashOf({ view: "items", task: task.task, cat: col === "overall" ? "" : col, run: row.run }), "data-run": row.run, "data-col": col,
          "aria-label": r.label + " " + metric.label + " " + txt(cell.t) + ": show the items" }, txt(cell.t));
      body.appendChild(el("tr", { cls: "run", "data-run": row.run, "data-metric": metric.name },
        el("td", { cls: "letters", text: col === "overall" ? row.letters : "" }),
        el("td", {}, el("a", { href: hashOf({ view: "about" }) + "&run=" + row.run, text: r.label })),
        el("td", { text: "run" }),
        el("td", { cls: "num value" }, link, " ", el("span", { cls: "ci", text: cell.ci_t || "" }),
          cell.unscored ? el("span", { cls: "unscored-rate", text: cell.unscored }) : null),
        el("td", {}, bar(cell)), el("td", { cls: "num", text: cell.images === null || cell.images === undefined ? "" : String(cell.images) }),
        el("td", { text: r.judge_label }), el("td", { text: r.mode || "" }), el("td", { text: r.thinking }),
        el("td", { text: r.build + (r.sample ? " " + r.sample : "") }), el("td", { text: row.unranked || r.coverage.join("; ") })));
    });
    metric.published.slice().sort(function (a, b) { return ((b.cells[col] || {}).v || 0) - ((a.cells[col] || {}).v || 0); }).forEach(function (p) {
      var cell = p.cells[col];
      if (!cell) return;
      body.appendChild(el("tr", { cls: "published", "data-kind": p.kind },
        el("td", { text: "" }), el("td", {}, p.model, el("span", { cls: "tag", text: p.kind })), el("td", { text: p.source }),
        el("td", { cls: "num", text: txt(cell.t) }), el("td", {}, bar(cell)), el("td"), el("td"), el("td"), el("td"), el("td"), el("td", { text: "no interval published" })));
    });
    return el("table", { "data-metric": metric.name }, el("caption", { cls: "sr-only", text: metric.label + (col === "overall" ? "" : " — " + col) }), el("thead", {}, head), body);
  }
  function groupsNote(metric) {
    var box = el("div", { cls: "note" });
    metric.groups.forEach(function (g) {
      var kind = run(g.members[0]);
      box.appendChild(el("p", { text: g.members.length + " runs ranked together (" + (kind.sample || "full release") + ", " + kind.judge_label + "). Minimum detectable difference (80% power): " + g.mdd_t + "." }));
      var t = el("tbody");
      g.pairs.forEach(function (p) {
        t.appendChild(el("tr", { cls: "pair", "data-a": p.a, "data-b": p.b }, el("td", { text: run(p.a).label }), el("td", { text: run(p.b).label }),
          el("td", { cls: "num", text: p.difference_t }), el("td", { cls: "num", text: String(p.p) }),
          el("td", { cls: "num", text: p.p_holm_t }), el("td", { text: p.differs ? "differ" : "cannot tell apart" }), el("td", { cls: "num", text: txt(p.mdd_t) })));
      });
      box.appendChild(el("details", {}, el("summary", { text: "Pairwise tests (" + g.pairs.length + " pairs, Holm-adjusted)" }),
        el("table", {}, el("thead", {}, el("tr", {}, el("th", { text: "A" }), el("th", { text: "B" }), el("th", { text: "A − B" }), el("th", { text: "p" }), el("th", { text: "p (Holm)" }), el("th", { text: "at α=" + S.alpha }), el("th", { text: "MDD" }))), t)));
    });
    if (!metric.groups.length) box.appendChild(el("p", { text: "No two runs are ranked together on this metric (one run of each kind: build, judge, mode, circular, no image, image variants; or the others are PARTIAL or NOT COMPARABLE)." }));
    return box;
  }
  function showBoard(p) {
    var out = [el("h2", { text: "Leaderboard" }), el("p", { cls: "rule", id: "rule", text: S.rule + " Groups are computed on the overall value; a category view shows values and intervals only. Intervals: 95%, Korn-Graubard with the design effect over images. Published and human rows are the papers' numbers, without intervals, never ranked with runs." })];
    S.tasks.forEach(function (task) {
      var col = p.get("col-" + task.task) || "overall";
      var cols = [];
      task.metrics.forEach(function (m) { m.columns.forEach(function (c) { if (!cols.some(function (x) { return x.key === c.key; })) cols.push(c); }); });
      var select = el("select", { id: "col-" + task.task });
      cols.forEach(function (c) { select.appendChild(el("option", { value: c.key, text: c.label, selected: c.key === col ? "selected" : null })); });
      select.addEventListener("change", function () { var q = params(); q.set("col-" + task.task, select.value); location.hash = "#" + q.toString(); });
      var section = el("section", { id: "task-" + task.task }, el("h2", { text: task.title }),
        el("p", { cls: "controls" }, el("label", { for: "col-" + task.task, text: "Column: " }), select, " ",
          el("a", { href: hashOf({ view: "items", task: task.task }), text: "All " + (S.items[task.task] || 0) + " items" })));
      task.metrics.forEach(function (m) {
        if (!m.columns.some(function (c) { return c.key === col; })) return;
        section.appendChild(el("h3", { text: m.label }));
        section.appendChild(el("div", { style: "overflow-x:auto" }, metricTable(task, m, col)));
        if (col === "overall") section.appendChild(groupsNote(m));
      });
      out.push(section);
    });
    if (S.charts.length) {
      out.push(el("h2", { text: "Charts" }));
      S.charts.forEach(function (c) { out.push(el("figure", {}, el("img", { src: c.file, alt: c.caption }), el("figcaption", { text: c.caption }))); });
    }
    main.replaceChildren.apply(main, out);
  }

  // --- items -----------------------------------------------------------------------
  function summary(task, a) {
    if (!a) return { cls: "absent", text: "–", title: "not in this run" };
    var v = a.verdict;
    if (task === "vqa") return v.robust ? { cls: "ok", text: "✓", title: "right" } : { cls: "bad", text: "✗", title: "wrong" };
    var unscored = a.unscored || [];
    if (task === "codis") {
      // constrained parsing: a pair whose only missing verdicts are replies that are no official label (scorers.py)
      if (unscored.some(Boolean) && v.every(function (x, j) { return x !== null || unscored[j]; })) return { cls: "unscored", text: "U", title: "unscored: a judge reply is not an official label (constrained parsing)" };
      if (v.some(function (x) { return x === null; })) return { cls: "none", text: "?", title: "not scored" };
      return v.every(Boolean) ? { cls: "ok", text: "✓", title: "both right" } : { cls: "bad", text: "✗", title: "not both right" };
    }
    var right = (v || []).filter(function (x) { return x; }).length, left = unscored.filter(Boolean).length;
    if (left) return { cls: "unscored", text: right + "/" + v.length + " U" + left, title: "CoRs right; " + left + " unscored (judge replies not an official label)" };
    return { cls: "none", text: (v ? right + "/" + v.length : a.recognition[0] + "/" + a.recognition[1]), title: v ? "CoRs right" : "entities recognized" };
  }
  function searchText(item) {
    var parts = [item.id, item.question || "", (item.contexts || []).join(" "), (item.options || []).join(" "), JSON.stringify(item.gold || "")];
    item.answers.forEach(function (a) { if (a) parts.push(JSON.stringify(a.out)); });
    return parts.join(" ").toLowerCase();
  }
  var PAGE = 50; // rows drawn at once: a filter redraws at most this many, however many runs and items
  function drawRows() {
    var L = state.list, shown = L.matches.slice(0, L.limit).map(function (i) { return L.row(i); });
    L.list.replaceChildren.apply(L.list, shown);
    var left = L.matches.length - shown.length;
    L.more.hidden = left <= 0;
    L.more.textContent = "Show " + Math.min(PAGE, left) + " more (" + left + " not shown)";
  }
  function applyFilters() {
    var L = state.list, f = L.filters, q = f.q.toLowerCase(), matches = [];
    for (var i = 0; i < L.items.length; i++) {
      var it = L.items[i];
      if ((!f.cat || it.category === f.cat) && (!f.rd || it.runs_disagree) && (!f.jd || it.judges_disagree) && (!f.un || it.unscored) && (!q || L.text[i].indexOf(q) >= 0)) matches.push(i);
    }
    L.matches = matches;
    L.limit = PAGE;
    L.count.textContent = matches.length + " of " + L.items.length + " items";
    drawRows();
    history.replaceState(null, "", hashOf({ view: "items", task: L.task, cat: f.cat, rd: f.rd, jd: f.jd, un: f.un, q: f.q, run: f.run }));
  }
  function showItems(p) {
    var task = p.get("task") || S.tasks[0].task;
    loadItems(task, function (data) {
      var f = { cat: p.get("cat") || "", rd: p.get("rd") === "1", jd: p.get("jd") === "1", un: p.get("un") === "1", q: p.get("q") || "", run: p.get("run") || "" };
      var tasks = el("select", { id: "f-task" });
      S.tasks.forEach(function (t) { tasks.appendChild(el("option", { value: t.task, text: t.title, selected: t.task === task ? "selected" : null })); });
      tasks.addEventListener("change", function () { location.hash = hashOf({ view: "items", task: tasks.value }); });
      var cats = el("select", { id: "f-cat" }, el("option", { value: "", text: "all categories" }));
      var seen = {};
      data.items.forEach(function (it) { if (it.category && !seen[it.category]) { seen[it.category] = 1; cats.appendChild(el("option", { value: it.category, text: it.category_label, selected: it.category === f.cat ? "selected" : null })); } });
      function box(id, label, on) { var c = el("input", { type: "checkbox", id: id, checked: on ? "checked" : null }); return [c, el("label", { for: id }, c, " " + label)]; }
      var rd = box("f-runs", "runs disagree", f.rd), jd = box("f-judges", "judges disagree", f.jd), un = box("f-unscored", "truncated / unscored", f.un);
      var q = el("input", { type: "search", id: "f-q", value: f.q, placeholder: "search text", "aria-label": "Search the items' text" });
      var count = el("p", { id: "count", role: "status", "aria-live": "polite" });
      var list = el("ul", { id: "item-list" });
      var focus = f.run === "" ? null : Number(f.run);
      var legend = el("p", { cls: "note", text: "Chips, one per run: " + data.runs.map(function (r, k) { return (k + 1) + " = " + run(r).label; }).join("; ") + (focus !== null ? ". Came from the leaderboard cell of " + run(focus).label + "." : "") });
      var cache = {};
      function row(i) { // a row is built the first time it is shown, then kept
        if (cache[i]) return cache[i];
        var it = data.items[i], chips = el("span", {});
        it.answers.forEach(function (a, k) { var s = summary(task, a); chips.appendChild(el("span", { cls: "chip " + s.cls + (data.runs[k] === focus ? " focus" : ""), title: run(data.runs[k]).label + ": " + s.title, text: s.text })); });
        cache[i] = el("li", { "data-id": it.id }, el("a", { href: hashOf({ item: task + "/" + it.id, run: f.run }), text: it.id }), " ", chips, " ",
          el("span", { cls: "ci", text: it.category_label || "" }), " ", el("span", { cls: "q", text: (it.question || "").slice(0, 110) }));
        return cache[i];
      }
      var more = el("button", { type: "button", id: "more" });
      more.addEventListener("click", function () { state.list.limit += PAGE; drawRows(); });
      state.list = { task: task, items: data.items, row: row, list: list, more: more, text: data.items.map(searchText), count: count, filters: f };
      [cats, rd[0], jd[0], un[0]].forEach(function (c) { c.addEventListener("change", function () { f.cat = cats.value; f.rd = rd[0].checked; f.jd = jd[0].checked; f.un = un[0].checked; applyFilters(); }); });
      q.addEventListener("input", function () { f.q = q.value; applyFilters(); });
      main.replaceChildren(el("h2", { text: "Items" }), data.note ? el("p", { cls: "note", text: data.note }) : "",
        el("div", { cls: "controls", role: "search" }, el("label", { for: "f-task", text: "Task" }), tasks, el("label", { for: "f-cat", text: "Category" }), cats, rd[1], jd[1], un[1], q), count, legend, list, more);
      applyFilters();
    });
  }
  function readable(v) { // a verdict or parsed answer in words: right/wrong, "robust: A", "entity → noun"
    if (v === null || v === undefined) return "not scored";
    if (v === true) return "right";
    if (v === false) return "wrong";
    if (Array.isArray(v)) return v.map(function (x) { return x && x.entity !== undefined ? x.entity + " → " + (x.noun || "none") : readable(x); }).join("; ");
    if (typeof v === "object") return Object.keys(v).map(function (k) { return k + ": " + readable(v[k]); }).join(", ");
    return String(v);
  }
  function verdictClass(v) { return v === true ? "verdict-ok" : v === false ? "verdict-bad" : ""; }
  // A judge panel's members on one CODIS query (j) or on every CoR of a description: each member's verdict, its
  // error and its raw replies; the run's verdict above is their majority (judges/panel.py).
  function panelBlock(task, members, j) {
    var body = el("tbody");
    members.forEach(function (m) {
      var verdict = task === "codis" ? m.verdicts[j] : m.verdicts, error = task === "codis" ? m.errors[j] : m.errors.filter(Boolean)[0];
      var vtext = task === "codis" ? readable(verdict) : verdict.filter(function (x) { return x; }).length + "/" + verdict.length + " CoRs right (" + verdict.map(readable).join("; ") + ")";
      var replies = el("td", { cls: "replies" });
      var given = task === "codis" ? [{ reply: m.replies[j] }] : m.replies;
      given.forEach(function (r) {
        if (r.reply === null || r.reply === undefined) return;
        replies.appendChild(el("pre", { text: (r.figure ? "Figure " + r.figure + ": " : "") + r.reply }));
      });
      if (!replies.childNodes.length) replies.appendChild(document.createTextNode(m.judge === "rule" ? "none (the rule judge gives no reply)" : "none kept"));
      body.appendChild(el("tr", { cls: "member", "data-judge": m.judge }, el("td", {}, el("code", { text: m.judge })),
        el("td", { cls: "verdict " + verdictClass(verdict), text: vtext + (error ? " (judge error: " + error + ")" : "") }), replies));
    });
    var head = el("tr", {}, el("th", { scope: "col", text: "Member" }), el("th", { scope: "col", text: "Verdict" }), el("th", { scope: "col", text: "Reply" }));
    return el("details", { cls: "panel", open: "open" }, el("summary", { text: "Judge panel: each of its " + members.length + " members (the verdict above is their majority)" }),
      el("table", {}, el("thead", {}, head), body));
  }
  function field(label, text) { return el("p", {}, el("b", { text: label + ": " }), text === null || text === undefined ? "-" : String(text)); }
  function answerCard(task, a, r, k, focus) {
    var card = el("article", { cls: "answer" + (r === focus ? " focus" : ""), "data-run": r }, el("h3", { text: run(r).label }));
    if (!a) { card.appendChild(el("p", { cls: "note", text: "This run has no answer for this item." })); return card; }
    var outs = Array.isArray(a.out) ? a.out : [a.out];
    outs.forEach(function (out, j) {
      var reply = a.replies[j] || a.replies[0] || {};
      var part = el("div", { cls: "part" });
      if (outs.length > 1) part.appendChild(el("h4", { text: task === "codis" ? "Query " + (j + 1) : "Rotation " + (j + 1) }));
      part.appendChild(el("p", {}, el("b", { text: "Status: " }), el("span", { cls: "status-" + reply.status, text: reply.status + (reply.finish ? " (finish: " + reply.finish + ")" : "") })));
      part.appendChild(el("pre", { cls: "raw", text: out === null || out === undefined ? "(no output kept)" : String(out) }));
      if (reply.reasoning) part.appendChild(el("details", { cls: "reasoning" }, el("summary", { text: "Reasoning (" + reply.reasoning.length + " characters)" }), el("pre", { text: reply.reasoning })));
      if (reply.content) part.appendChild(el("details", { cls: "content" }, el("summary", { text: "Reply as written" }), el("pre", { text: reply.content })));
      var parsed = Array.isArray(a.parsed) && task === "codis" ? a.parsed[j] : (Array.isArray(a.parsed) && task === "vqa" ? a.parsed[j] : a.parsed);
      part.appendChild(field("Parsed answer", readable(parsed)));
      var verdict = task === "codis" ? a.verdict[j] : a.verdict;
      var unscored = task === "codis" && a.unscored && a.unscored[j];
      var vtext = task === "description" && verdict === null ? "no Cognition judge in this run" : unscored ? "UNSCORED" : readable(verdict);
      if (task === "description" && a.unscored && verdict) vtext = verdict.map(function (x, i) { return a.unscored[i] ? "UNSCORED" : readable(x); }).join("; ");
      part.appendChild(el("p", {}, el("b", { text: "Verdict: " }), el("span", { cls: unscored ? "verdict-unscored" : verdict === true ? "verdict-ok" : verdict === false ? "verdict-bad" : "", text: vtext })));
      if (unscored) part.appendChild(el("p", { cls: "unscored-note", text: "The judge's reply is not one of the official labels (constrained parsing): left out of the score, neither wrong nor a judge failure; counted in the unscored rate beside the number." }));
      if (task === "codis") {
        if (a.judge_error && a.judge_error[j] && !unscored) part.appendChild(field("Judge error", a.judge_error[j]));
        if (a.panel) part.appendChild(panelBlock(task, a.panel, j));
        else part.appendChild(a.judge && a.judge[j] !== null && a.judge[j] !== undefined ? el("details", { cls: "judge", open: "open" }, el("summary", { text: "Judge's reply" }), el("pre", { text: a.judge[j] })) : field("Judge's reply", "none (rule judge or not judged)"));
      }
      card.appendChild(part);
    });
    if (task === "description") {
      card.appendChild(field("Entities recognized", a.recognition[0] + " of " + a.recognition[1]));
      if (a.judge) card.appendChild(el("details", { cls: "judge" }, el("summary", { text: "Judge's replies (" + a.judge.length + ")" }), el("pre", { text: JSON.stringify(a.judge, null, 1) })));
      if (a.panel) card.appendChild(panelBlock(task, a.panel));
    }
    return card;
  }
  function showItem(p) {
    var ref = p.get("item"), cut = ref.indexOf("/"), task = ref.slice(0, cut), id = ref.slice(cut + 1);
    var focus = p.get("run") ? Number(p.get("run")) : null;
    loadItems(task, function (data) {
      var at = -1;
      data.items.forEach(function (it, k) { if (it.id === id) at = k; });
      if (at < 0) { main.replaceChildren(el("p", { text: "No item " + id + " in " + task + "." })); return; }
      var it = data.items[at], head = el("div", { cls: "item-head" });
      if (it.image) head.appendChild(el("img", { src: it.image, alt: "The image of item " + it.id }));
      var text = el("div", {}, field("Category", it.category_label || "-"), field("Question", it.question));
      (it.contexts || []).forEach(function (c, j) { text.appendChild(field("Context " + (j + 1), c)); text.appendChild(field("Gold " + (j + 1), it.gold[j])); });
      if (it.options) { var ol = el("ol", { type: "A" }); it.options.forEach(function (o, j) { ol.appendChild(el("li", { cls: "ABCD"[j] === it.gold ? "verdict-ok" : "", text: o + ("ABCD"[j] === it.gold ? " (gold)" : "") })); }); text.appendChild(ol); text.appendChild(field("Gold", it.gold)); }
      if (task === "description") {
        text.appendChild(field("Annotated description (gold)", it.gold)); text.appendChild(field("Entities", (it.entities || []).join(", ")));
        var cors = el("ul");
        Object.keys(it.cors || {}).forEach(function (c) { it.cors[c].forEach(function (t) { cors.appendChild(el("li", { text: c + ": " + t })); }); });
        text.appendChild(el("details", {}, el("summary", { text: "Chains of reasoning (" + cors.childNodes.length + ")" }), cors));
      }
      head.appendChild(text);
      var nav = el("p", {}, el("a", { href: hashOf({ view: "items", task: task }), text: "← all items" }), " · ",
        at > 0 ? el("a", { href: hashOf({ item: task + "/" + data.items[at - 1].id }), text: "previous" }) : "previous", " · ",
        at < data.items.length - 1 ? el("a", { href: hashOf({ item: task + "/" + data.items[at + 1].id }), text: "next" }) : "next");
      var answers = el("div", { cls: "answers" });
      it.answers.forEach(function (a, k) { answers.appendChild(answerCard(task, a, data.runs[k], k, focus)); });
      main.replaceChildren(nav, el("h2", { id: "item-title", text: "Item " + it.id + " (" + task + ")" }), head, el("h2", { text: "Answers" }), answers);
    });
  }

  function showAbout() {
    var list = el("ul");
    S.runs.forEach(function (r) {
      list.appendChild(el("li", { id: "run-" + r.index }, el("b", { text: r.label }), ": " + r.line + "; thinking " + r.thinking + (r.coverage.length ? "; " + r.coverage.join("; ") : "") + (r.not_comparable ? "; NOT COMPARABLE: " + r.not_comparable : "")));
    });
    main.replaceChildren(el("h2", { text: "About this site" }), el("p", { cls: "rule", text: S.rule }),
      el("p", { cls: "note", text: "Permutations per pair: " + S.permutations + ". Written by cogbench " + S.version + " (`cogbench report --site`)." }), el("h2", { text: "Runs" }), list);
  }

  function route() {
    var p = params();
    var view = p.get("item") ? "item" : p.get("view") || "board";
    ["board", "items", "about"].forEach(function (v) { document.getElementById("nav-" + v).setAttribute("aria-current", v === view || (view === "item" && v === "items") ? "page" : "false"); });
    if (view === "item") showItem(p);
    else if (view === "items") showItems(p);
    else if (view === "about") showAbout();
    else showBoard(p);
  }
  document.getElementById("footer").textContent = "cogbench " + S.version + " · " + S.runs.length + " runs · works offline from the disk";
  window.addEventListener("hashchange", route);
  route();
})();
