// The blind labelling page (cogbench label): one unit at a time, labels kept in localStorage, exported as JSONL.
// Every text from the data goes in as textContent, never as HTML: a model's answer cannot write into the page.
"use strict";
(function () {
  const DATA = window.COGBENCH_LABEL;
  const STORE = "cogbench-label/" + DATA.sample;
  const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
  const main = document.getElementById("main");

  function load() {
    try {
      return JSON.parse(localStorage.getItem(STORE)) || null;
    } catch (error) {
      return null;
    }
  }
  function save(state) {
    localStorage.setItem(STORE, JSON.stringify(state));
  }
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }
  function unitsOf(state) {
    return DATA.units.filter((u) => state.role === "A" || u.shared);
  }

  // --- start: the labeller's id and role, asked once -----------------------------------------------------------
  function startForm() {
    const input = el("input", { id: "labeller", type: "text", autocomplete: "off", "aria-describedby": "labeller-help" });
    const error = el("p", { id: "start-error", class: "error", role: "alert" });
    const roles = el("fieldset", {}, el("legend", { text: "Role" }));
    for (const [value, text] of [
      ["A", "A: label every unit (" + DATA.units.length + ")"],
      ["B", "B: second labeller, the shared units only (" + DATA.units.filter((u) => u.shared).length + ")"],
    ]) {
      const radio = el("input", { type: "radio", name: "role", id: "role-" + value, value: value });
      if (value === "A") radio.checked = true;
      roles.append(el("div", {}, radio, el("label", { for: "role-" + value, text: " " + text })));
    }
    const form = el(
      "form",
      { id: "start-form" },
      el("div", { class: "form-row" }, el("label", { for: "labeller", text: "Labeller id " }), input),
      el("p", { id: "labeller-help", class: "note", text: "Letters, digits, dot, dash or underscore; at most 64." }),
      roles,
      error,
      el("button", { id: "start", type: "submit", class: "primary", text: "Start labelling" })
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const id = input.value.trim();
      if (!ID_PATTERN.test(id)) {
        error.textContent = "Give a labeller id: letters, digits, dot, dash or underscore.";
        return;
      }
      const role = form.querySelector("input[name=role]:checked").value;
      save({ labeller: id, role: role, at: 0, labels: {}, history: [] });
      render();
    });
    main.replaceChildren(el("h2", { text: "Who is labelling?" }), el("p", { class: "note", text: DATA.protocol.roles + "." }), form);
    input.focus();
  }

  // --- one unit --------------------------------------------------------------------------------------------------
  function field(list, term, text, pre) {
    list.append(el("dt", { text: term }), el("dd", {}, pre ? el("pre", { text: text }) : document.createTextNode(text)));
  }
  function unitView(unit, number, total) {
    const list = el("dl");
    if (unit.task === "codis") {
      field(list, "Question", unit.question);
      field(list, "Context", unit.context);
      field(list, "Reference answer for this context", unit.reference);
      field(list, "Answer", unit.answer, true);
    } else {
      field(list, "Reasoning item (" + unit.category_label + ")", unit.item);
      field(list, "Description", unit.answer, true);
    }
    const image = unit.image ? el("img", { src: unit.image, alt: "The image of item " + unit.item_id }) : el("p", { text: "(no image)" });
    return el("section", { class: "unit", "aria-label": "Unit " + number + " of " + total }, el("div", {}, image), list);
  }

  function labelView() {
    const state = load();
    if (!state) return startForm();
    const units = unitsOf(state);
    if (!units.length) return main.replaceChildren(el("h2", { text: "No unit to label for role " + state.role }));
    state.at = Math.max(0, Math.min(state.at, units.length - 1));
    const unit = units[state.at];
    const done = units.filter((u) => u.unit in state.labels).length;
    const given = unit ? state.labels[unit.unit] : undefined;
    const progress = el("p", {
      id: "progress",
      text: "Unit " + (state.at + 1) + " of " + units.length + " · " + done + " labelled · labeller " + state.labeller + " (role " + state.role + ")",
    });
    const yes = el("button", { id: "yes", type: "button", "aria-pressed": String(given && given.label === 1), text: "Yes (1)", onclick: () => give(1) });
    const no = el("button", { id: "no", type: "button", "aria-pressed": String(given && given.label === 0), text: "No (2)", onclick: () => give(0) });
    const moves = el(
      "div",
      { class: "moves" },
      el("button", { id: "prev", type: "button", text: "← Previous", onclick: () => move(-1) }),
      el("button", { id: "next", type: "button", text: "Next →", onclick: () => move(1) }),
      el("button", { id: "undo", type: "button", text: "Undo (U)", onclick: undo }),
      el("button", { id: "export", type: "button", class: "primary", text: "Export labels (JSONL)", onclick: exportLabels }),
      el("button", { id: "switch", type: "button", text: "Change labeller", onclick: switchLabeller })
    );
    const current = el("p", { id: "current", "aria-live": "polite", text: given ? "Your label: " + (given.label ? "yes" : "no") : "Not labelled yet" });
    const finished = done === units.length ? el("p", { id: "finished", role: "status", text: "All " + units.length + " units labelled: export them." }) : null;
    main.replaceChildren(
      ...[el("h2", { id: "unit-title", text: "Unit " + unit.unit }), progress, finished].filter(Boolean),
      unitView(unit, state.at + 1, units.length),
      el("h3", { class: "ask", id: "ask", text: unit.ask }),
      el("div", { class: "choices", role: "group", "aria-labelledby": "ask" }, yes, no),
      current,
      moves,
      el("p", { class: "note", text: "Keys: 1 yes, 2 no, ← → move, U undo. Labels are kept in this browser." })
    );
  }

  function give(label) {
    const state = load();
    const units = unitsOf(state);
    const unit = units[state.at];
    state.history.push({ unit: unit.unit, at: state.at, before: state.labels[unit.unit] || null });
    state.labels[unit.unit] = { label: label, time: new Date().toISOString() };
    // The next unlabelled unit after this one (this one is labelled now, so `>=` would find the same).
    const next = units.findIndex((u, i) => i > state.at && !(u.unit in state.labels));
    if (next >= 0) state.at = next;
    else if (state.at < units.length - 1) state.at += 1;
    save(state);
    render();
  }
  function move(step) {
    const state = load();
    state.at = Math.max(0, Math.min(unitsOf(state).length - 1, state.at + step));
    save(state);
    render();
  }
  function undo() {
    const state = load();
    const last = state.history.pop();
    if (!last) return;
    if (last.before) state.labels[last.unit] = last.before;
    else delete state.labels[last.unit];
    state.at = last.at;
    save(state);
    render();
  }
  function switchLabeller() {
    if (window.confirm("Export first: this browser forgets these labels. Change labeller?")) {
      localStorage.removeItem(STORE);
      render();
    }
  }

  function lines(state, units) {
    return (units || unitsOf(state))
      .filter((u) => u.unit in state.labels)
      .map((u) =>
        JSON.stringify({
          format: "cogbench labels 1",
          sample: DATA.sample,
          unit: u.unit,
          task: u.task,
          answers: u.answers,
          item_id: u.item_id,
          category: u.category,
          query: u.query,
          label: state.labels[u.unit].label,
          labeller: state.labeller,
          role: state.role,
          time: state.labels[u.unit].time,
        }) + "\n"
      )
      .join("");
  }
  function exportLabels() {
    const state = load();
    download(lines(state), "labels-" + DATA.sample.slice(0, 12) + "-" + state.labeller + "-" + state.role + ".jsonl");
  }
  function download(text, name) {
    const blob = new Blob([text], { type: "application/x-ndjson" });
    const link = el("a", { href: URL.createObjectURL(blob), download: name });
    document.body.append(link);
    link.click();
    link.remove();
  }

  // --- adjudication: two exports, the units where they differ ----------------------------------------------------
  function adjudicateView() {
    const inputs = ["first", "second"].map((name) => el("input", { type: "file", id: "file-" + name, accept: ".jsonl,application/x-ndjson" }));
    const out = el("div", { id: "adjudication", "aria-live": "polite" });
    const read = () => Promise.all(inputs.map((input) => (input.files[0] ? input.files[0].text() : Promise.resolve(null))));
    const update = () =>
      read().then((texts) => {
        if (texts.some((t) => t === null)) return;
        compare(texts, out);
      });
    inputs.forEach((input) => input.addEventListener("change", update));
    main.replaceChildren(
      el("h2", { text: "Adjudicate two labellers" }),
      el("p", { class: "note", text: "Load two exports of this sample (role A and role B); the units where their labels differ are shown with both labels." }),
      el("div", { class: "form-row" }, el("label", { for: "file-first", text: "First labels file " }), inputs[0]),
      el("div", { class: "form-row" }, el("label", { for: "file-second", text: "Second labels file " }), inputs[1]),
      out
    );
  }
  function parse(text) {
    const labels = {};
    let who = "";
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      const row = JSON.parse(line);
      if (row.sample !== DATA.sample) throw new Error("a labels file of another sample");
      labels[row.unit] = row.label;
      who = row.labeller + " (" + row.role + ")";
    }
    return { labels: labels, who: who };
  }
  function compare(texts, out) {
    let files;
    try {
      files = texts.map(parse);
    } catch (error) {
      out.replaceChildren(el("p", { class: "error", role: "alert", text: "Not a labels file of this sample: " + error.message }));
      return;
    }
    const both = DATA.units.filter((u) => u.unit in files[0].labels && u.unit in files[1].labels);
    const differ = both.filter((u) => files[0].labels[u.unit] !== files[1].labels[u.unit]);
    const word = (label) => (label ? "yes" : "no");
    const settled = {};
    const cards = differ.map((u) => {
      const choose = (label) => () => {
        settled[u.unit] = { label: label, time: new Date().toISOString() };
        yes.setAttribute("aria-pressed", String(label === 1));
        no.setAttribute("aria-pressed", String(label === 0));
      };
      const yes = el("button", { type: "button", class: "settle-yes", "aria-pressed": "false", text: "Yes", onclick: choose(1) });
      const no = el("button", { type: "button", class: "settle-no", "aria-pressed": "false", text: "No", onclick: choose(0) });
      return el(
        "article",
        { class: "differ", "data-unit": u.unit },
        el("h3", { text: "Unit " + u.unit + ": " + files[0].who + " " + word(files[0].labels[u.unit]) + ", " + files[1].who + " " + word(files[1].labels[u.unit]) }),
        el("p", { class: "ask", text: u.ask }),
        unitView(u, DATA.units.indexOf(u) + 1, DATA.units.length),
        el("div", { class: "choices", role: "group", "aria-label": "Adjudicated label of unit " + u.unit }, yes, no)
      );
    });
    const who = el("input", { id: "adjudicator", type: "text", autocomplete: "off" });
    const error = el("p", { id: "adj-error", class: "error", role: "alert" });
    const save = el("button", {
      id: "adj-export",
      type: "button",
      class: "primary",
      text: "Export adjudicated labels (JSONL)",
      onclick: () => {
        if (!ID_PATTERN.test(who.value.trim())) {
          error.textContent = "Give an adjudicator id: letters, digits, dot, dash or underscore.";
          return;
        }
        const state = { labeller: who.value.trim(), role: "adjudicator", labels: settled };
        download(lines(state, differ), "labels-" + DATA.sample.slice(0, 12) + "-" + state.labeller + "-adjudicator.jsonl");
      },
    });
    out.replaceChildren(
      el("p", { id: "adj-summary", text: both.length + " units labelled by both: " + (both.length - differ.length) + " agree, " + differ.length + " differ" }),
      ...cards,
      ...(differ.length ? [el("div", { class: "form-row" }, el("label", { for: "adjudicator", text: "Adjudicator id " }), who), error, save] : [])
    );
  }

  function render() {
    const view = location.hash === "#adjudicate" ? "adjudicate" : "label";
    for (const name of ["label", "adjudicate"]) {
      const link = document.getElementById("nav-" + name);
      if (name === view) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    if (view === "adjudicate") adjudicateView();
    else labelView();
  }

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (location.hash === "#adjudicate" || (target && ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
    if (!load() || event.altKey || event.metaKey) return;
    const keys = { 1: () => give(1), 2: () => give(0), ArrowRight: () => move(1), ArrowLeft: () => move(-1), u: undo, U: undo };
    const action = event.ctrlKey ? (event.key === "z" ? undo : null) : keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });
  window.addEventListener("hashchange", render);
  render();
})();
