// cowbird's search page: preview a query, sort it, count it (frequency, distribution, collocations),
// then download it. Plain JavaScript, no build step. The page talks only to the public API
// (/api/v1/translate, /query, /export, /frequency, /distribution, /collocations) and keeps the whole
// search, the page of hits or the random sample shown, the view and its settings in the URL, so that
// a results page can be bookmarked, shared, reloaded and reached with Back.
"use strict";

const $ = (selector) => document.querySelector(selector);
const corpora = JSON.parse($("#corpus-data").textContent);
const PAGE = 100;
let running = null; // the AbortController of the query in flight
let current = null; // the search shown: {params, offset, sample, total, order}
const ROWS = { frequency: 100, distribution: 30, collocations: 100 }; // rows of a table page (a chart: ≤ 30 bars)
const OFFSETS = { frequency: "freq_offset", distribution: "dist_offset", collocations: "coll_offset" };
const tableOffset = { frequency: 0, distribution: 0, collocations: 0 }; // the page of each analysis table
const VIEWS = ["kwic", "frequency", "distribution", "collocations"];
// the controls whose values live in the URL (under their data-param name) when not at their default
const SETTINGS = {
  "sort-on": "sort_on", "sort-attribute": "sort_attribute", "sort-direction": "direction", "sort-fold": "sort_fold",
  "freq-by": "freq_by", "freq-on": "freq_on", "freq-fold-c": "freq_fold_c", "freq-fold-d": "freq_fold_d",
  "dist-by": "dist_by", "dist-order": "dist_order",
  "coll-attribute": "coll_attribute", "coll-window": "coll_window", "coll-within": "coll_within", "coll-min": "coll_min",
};
const defaults = {}; // control id -> its value when the page was built
let collOrder = "log_likelihood";

function corpusInfo() {
  return corpora.find((c) => c.name === $("#corpus").value) || corpora[0];
}

// ---------------------------------------------------------------- the form <-> the URL

function formState() {
  const filters = [...document.querySelectorAll("#filter-rows .filter")]
    .map((row) => ({
      attribute: row.querySelector("select.attribute").value,
      negated: row.querySelector("select.operator").value === "!~",
      regex: row.querySelector("input").value,
    }))
    .filter((f) => f.regex !== "");
  return {
    corpus: $("#corpus").value,
    q: $("#q").value,
    syntax: document.querySelector('input[name="syntax"]:checked').value,
    ignore_case: $("#ignore_case").checked,
    filters,
  };
}

function activeView() {
  return VIEWS.find((view) => $(`#tab-${view}`).getAttribute("aria-selected") === "true");
}

function value(id) {
  const element = document.getElementById(id);
  return element.type === "checkbox" ? (element.checked ? "1" : "") : element.value;
}

function setValue(id, text) {
  const element = document.getElementById(id);
  if (element.type === "checkbox") element.checked = text === "1";
  else if (element.tagName !== "SELECT" || [...element.options].some((o) => o.value === text)) element.value = text;
}

// the sort of the concordance, as /api/v1/query and /export take it (null: corpus order)
function sortParams() {
  const on = value("sort-on");
  if (!on) return null;
  if (on === "random") return { sort: "random", direction: "asc" };
  return { sort: `${on}.${value("sort-attribute")}${value("sort-fold") ? "%c" : ""}`, direction: value("sort-direction") };
}

// the page's URL: the search, the page or sample of hits shown, the view shown and every setting
// changed from its default
function pageUrl(params, at = current) {
  const url = new URLSearchParams(params);
  if (at?.sample) {
    url.set("sample", String(at.sample.size));
    url.set("seed", String(at.sample.seed));
  } else if (at?.offset) url.set("offset", String(at.offset));
  for (const [view, name] of Object.entries(OFFSETS)) if (tableOffset[view]) url.set(name, String(tableOffset[view]));
  const view = activeView();
  if (view !== "kwic") url.set("view", view);
  for (const [id, name] of Object.entries(SETTINGS)) {
    if (value(id) !== defaults[id]) url.set(name, value(id));
  }
  if (collOrder !== "log_likelihood") url.set("coll_order", collOrder);
  return `/?${url}`;
}

function apiParams(state) {
  const params = new URLSearchParams({ corpus: state.corpus, q: state.q, syntax: state.syntax });
  if (state.ignore_case) params.set("ignore_case", "1");
  for (const f of state.filters) params.append("filter", `${f.attribute}${f.negated ? "!~" : "~"}${f.regex}`);
  return params;
}

// A corpus named in the URL that the viewer cannot use is said to be so, in the API's words, whether
// it does not exist or needs a login; nothing runs on another corpus in its place.
function showCorpusProblem(name) {
  const notice = $("#corpus-problem");
  notice.hidden = name === null;
  notice.replaceChildren();
  if (name === null) return;
  notice.append(`There is no corpus '${name}' open to you: it does not exist, or it needs a login or a group's right.`);
  if (!$("#history-list")) { // anonymous
    const link = document.createElement("a");
    link.href = "/login";
    link.textContent = "Log in";
    notice.append(" ", link, " to see the corpora open to your account.");
  }
}

function restore(params) {
  const wanted = params.get("corpus");
  const missing = wanted !== null && !corpora.some((c) => c.name === wanted);
  if (wanted !== null && !missing) $("#corpus").value = wanted;
  $("#q").value = params.get("q") || "";
  const syntax = params.get("syntax") === "cqp" ? "cqp" : "simple";
  document.querySelector(`input[name="syntax"][value="${syntax}"]`).checked = true;
  $("#ignore_case").checked = params.get("ignore_case") === "1";
  $("#filter-rows").replaceChildren();
  for (const text of params.getAll("filter")) {
    const match = /^([A-Za-z0-9_]+)(!?~)(.*)$/s.exec(text);
    if (match) addFilter(match[1], match[2], match[3]);
  }
  describeCorpus();
  showAnchorOptions();
  for (const [id, name] of Object.entries(SETTINGS)) setValue(id, params.has(name) ? params.get(name) : defaults[id]);
  collOrder = params.get("coll_order") || "log_likelihood";
  for (const [view, name] of Object.entries(OFFSETS)) tableOffset[view] = whole(params.get(name));
  showSortControls();
  select(VIEWS.includes(params.get("view")) ? params.get("view") : "kwic", false);
  showCorpusProblem(missing ? wanted : null);
  if (missing) {
    clearResults();
    translate();
    return;
  }
  const seed = params.get("seed");
  const sample = params.has("sample") && seed !== null && /^\d+$/.test(seed)
    ? { size: Math.min(PAGE, Math.max(1, whole(params.get("sample")))), seed: Number(seed) } : null;
  preview({ offset: whole(params.get("offset")), sample });
}

// a non-negative integer from the URL (0 for anything else)
function whole(text) {
  const n = Number.parseInt(text ?? "", 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

// ---------------------------------------------------------------- corpus, filters, live CQP

function describeCorpus() {
  const info = corpusInfo();
  $("#corpus-description").textContent = info.description || "";
  // each attribute a query, a filter or a download can name, with what it holds (its tagset) where the corpus says
  const described = (name, kind) => {
    const term = document.createElement("dt");
    term.textContent = name;
    const text = document.createElement("dd");
    text.textContent = info.attributes?.[name] || kind;
    return [term, text];
  };
  $("#attribute-list").replaceChildren(...info.p_attributes.flatMap((a) => described(a, "token attribute")),
    ...info.meta.flatMap((a) => described(a, "metadata (filters, distributions, downloads)")));
  for (const select of document.querySelectorAll("#filter-rows select.attribute")) fillAttributes(select, select.value);
  const fill = (id, names, preferred) => {
    const element = document.getElementById(id);
    const keep = names.includes(element.value) ? element.value : names.find((n) => n === preferred) || names[0] || "";
    element.replaceChildren(...names.map((name) => new Option(name, name, false, name === keep)));
    element.value = keep;
  };
  fill("sort-attribute", info.p_attributes, "word");
  fill("freq-by", info.p_attributes, "lemma");
  fill("coll-attribute", info.p_attributes, "lemma");
  fill("dist-by", info.meta, info.meta.find((m) => /genre|year|date/.test(m)) || info.meta[0]);
  const regions = info.s_attributes.filter((a) => !info.meta.includes(a));
  const within = $("#coll-within");
  const kept = within.value;
  within.replaceChildren(...[...regions, "none"].map((r) => new Option(r === "none" ? "no limit" : r, r)));
  within.value = [...regions, "none"].includes(kept) ? kept : regions.includes("text") ? "text" : "none";
}

function fillAttributes(select, chosen) {
  select.replaceChildren(...corpusInfo().meta.map((name) => new Option(name, name, false, name === chosen)));
}

function addFilter(attribute = "", operator = "~", regex = "") {
  const row = document.createElement("div");
  row.className = "filter";
  const index = document.querySelectorAll("#filter-rows .filter").length + 1;
  row.innerHTML = `
    <select class="attribute" aria-label="Filter ${index}: attribute"></select>
    <select class="operator" aria-label="Filter ${index}: condition">
      <option value="~">matches</option><option value="!~">does not match</option></select>
    <input type="text" aria-label="Filter ${index}: regular expression" placeholder="regular expression">
    <button type="button" class="remove" aria-label="Remove filter ${index}">Remove</button>`;
  fillAttributes(row.querySelector("select.attribute"), attribute);
  row.querySelector("select.operator").value = operator;
  row.querySelector("input").value = regex;
  row.querySelector("button.remove").addEventListener("click", () => row.remove());
  $("#filter-rows").append(row);
  return row;
}

// the target (@, @0) and keyword (@1) are offered for sorting and counting when a CQP query marks them
function showAnchorOptions() {
  const state = formState();
  const marked = {
    target: state.syntax === "cqp" && /@(?![1-9])/.test(state.q),
    keyword: state.syntax === "cqp" && /@1/.test(state.q),
  };
  for (const option of document.querySelectorAll("option[data-anchor]")) {
    option.hidden = !marked[option.dataset.anchor];
    if (option.hidden && option.selected) option.closest("select").value = "";
  }
  showSortControls();
}

// The CQP line shows what /api/v1/query would run for the form as it is — the server translates it,
// with the case switch and the filters — and never an earlier query's CQP: it is blanked at once
// when the form changes and filled when the translation of the form as it now is comes back.
let translating = null;
function pendingTranslation() {
  const line = $("#cqp-preview");
  line.textContent = "…";
  line.dataset.state = "pending";
}

async function translate() {
  const state = formState();
  const line = $("#cqp-preview");
  showAnchorOptions();
  translating?.abort();
  if (!state.q.trim()) {
    line.textContent = "";
    line.dataset.state = "empty";
    return;
  }
  translating = new AbortController();
  try {
    const answer = await fetch(`/api/v1/translate?${apiParams(state)}`, { signal: translating.signal });
    const body = await answer.json();
    line.textContent = answer.ok ? body.cqp : "— (the query has an error)";
    line.dataset.state = answer.ok ? "translated" : "error";
  } catch (error) {
    if (error.name !== "AbortError") {
      line.textContent = "";
      line.dataset.state = "error";
    }
  }
}

// ---------------------------------------------------------------- running a preview

function showError(problem) {
  const box = $("#query-error");
  if (problem.offset !== undefined && problem.offset !== null) {
    // the caret under the offending character, in the query box's own terms
    const text = $("#q").value;
    box.textContent = `${text}\n${" ".repeat(Math.max(0, problem.offset))}^ ${problem.message}`;
  } else {
    box.textContent = problem.detail || problem.title || "the query failed";
  }
  box.hidden = false;
}

function setBusy(busy) {
  $("#progress").hidden = !busy;
  $("#results").setAttribute("aria-busy", String(busy));
  $("#submit").disabled = busy;
}

// The hits of the search in the form: a page from `offset`, or a random `sample` ({size, seed}).
// Only a search that succeeded goes into the URL — pushed (a new entry for Back) when the user
// asked for it, else replaced — so that Back never returns to a failed search.
async function preview({ offset = 0, sample = null, push = false } = {}) {
  const state = formState();
  $("#query-error").hidden = true;
  if (!state.q.trim()) return;
  const params = apiParams(state);
  const order = sample ? null : sortParams();
  const info = corpusInfo();
  const show = ["lemma", "pos"].filter((a) => info.p_attributes.includes(a));
  const query = new URLSearchParams(params);
  if (show.length) query.set("show", show.join(","));
  if (order) {
    query.set("sort", order.sort);
    query.set("direction", order.direction);
    if (order.sort === "random") query.set("seed", "1");
  }
  if (sample) {
    query.set("sample", String(sample.size));
    query.set("seed", String(sample.seed));
  } else {
    query.set("offset", String(offset));
    query.set("limit", String(PAGE));
  }
  running?.abort();
  running = new AbortController();
  setBusy(true);
  const started = performance.now();
  try {
    const answer = await fetch(`/api/v1/query?${query}`, { signal: running.signal });
    const body = await answer.json();
    if (!answer.ok) {
      showError(body);
      clearResults();
      return;
    }
    const drawn = performance.now();
    const changed = !current || current.params.toString() !== params.toString();
    current = { params, offset, sample, total: body.total, order };
    if (changed) {
      for (const view of Object.keys(tableOffset)) if (push) tableOffset[view] = 0;
      analysed = {};
    }
    render(body, show);
    document.body.dataset.renderMs = String(Math.round(performance.now() - drawn));
    document.body.dataset.queryMs = String(Math.round(drawn - started));
    const line = $("#cqp-preview");
    line.textContent = body.cqp; // what ran
    line.dataset.state = "ran";
    const url = pageUrl(params);
    if (url !== `${location.pathname}${location.search}`) {
      if (push) history.pushState(null, "", url);
      else history.replaceState(null, "", url);
    }
    if (!sample && offset === 0) loadHistory();
    if (activeView() !== "kwic" && body.total > 0) analyse();
  } catch (error) {
    if (error.name === "AbortError") $("#summary").textContent = "Search cancelled.";
    else {
      showError({ detail: `the search failed: ${error.message}` });
      clearResults();
    }
  } finally {
    setBusy(false);
    running = null;
  }
}

// No results on the page: after a failed search nothing of an earlier one stays to be taken for its answer.
function clearResults() {
  current = null;
  analysed = {};
  $("#summary").textContent = "";
  for (const id of ["#actions", "#views", "#sorting", "#partitions", "#incomplete", "#hint", "#kwic"]) $(id).hidden = true;
  $("#kwic tbody").replaceChildren();
  showPanels();
}

function summaryText(body, shown) {
  const ms = `${Math.round(body.elapsed_ms)} ms`;
  if (body.total === 0) return `No hits · ${ms}`;
  const total = `${body.total.toLocaleString("en")} hit${body.total === 1 ? "" : "s"}`;
  if (body.sample) return `Random sample of ${shown} of ${total} (seed ${current.sample.seed}) · ${ms}`;
  if (!shown) return `No hits from ${(body.offset + 1).toLocaleString("en")} on; there are ${total} · ${ms}`;
  return `${(body.offset + 1).toLocaleString("en")}–${(body.offset + shown).toLocaleString("en")} of ${total} · ${ms}`;
}

const LONG_MATCH = 40; // characters: a longer match wraps in its column instead of widening it

function render(body, show) {
  const shown = body.hits.length;
  const empty = body.total === 0;
  $("#summary").textContent = summaryText(body, shown);
  $("#actions").hidden = empty; // nothing to page, sample, sort, count or download
  $("#views").hidden = empty;
  $("#sorting").hidden = empty;
  showPanels();
  $("#prev").disabled = Boolean(body.sample) || body.offset === 0;
  $("#next").disabled = Boolean(body.sample) || body.offset + shown >= body.total;
  $("#random").disabled = body.total === 0;
  $("#open-download").disabled = body.total === 0;
  const incomplete = $("#incomplete");
  incomplete.hidden = body.complete;
  incomplete.textContent = body.complete ? "" : `Incomplete: partition(s) ${body.failed.join(", ")} did not answer; their hits are missing.`;
  $("#hint").hidden = !body.hint;
  $("#hint").textContent = body.hint || "";
  $("#partitions").hidden = false;
  $("#partition-list").replaceChildren(
    ...body.partitions.map((p) => {
      const item = document.createElement("li");
      item.textContent = `${p.id}: ${p.status === "ok" ? p.total.toLocaleString("en") : `failed (${p.error})`}`;
      return item;
    }),
  );
  const rows = body.hits.map((hit) => {
    const row = document.createElement("tr");
    const left = row.insertCell();
    left.className = "left"; // right-aligned, cut at its far end: the span keeps the words in order
    const words = document.createElement("span");
    words.textContent = hit.left;
    left.append(words);
    const match = row.insertCell();
    match.className = hit.match.length > LONG_MATCH ? "match long" : "match"; // a long match wraps, never cut
    const mark = document.createElement("mark");
    mark.textContent = hit.match;
    const details = show.map((a) => `${a}: ${hit.attributes[a] ?? ""}`).join(" · ");
    if (details) {
      mark.title = details;
      mark.tabIndex = 0;
      mark.setAttribute("aria-label", `${hit.match} (${details})`);
    }
    match.append(mark);
    const right = row.insertCell();
    right.className = "right";
    right.textContent = hit.right;
    const link = row.insertCell();
    const anchor = document.createElement("a");
    anchor.href = hit.ref;
    anchor.textContent = "¶";
    anchor.title = `Static link to position ${hit.position}`;
    anchor.setAttribute("aria-label", `Static link to position ${hit.position}`);
    link.append(anchor);
    return row;
  });
  $("#kwic tbody").replaceChildren(...rows);
  $("#kwic").hidden = rows.length === 0;
}

// ---------------------------------------------------------------- views: tabs and the analyses

function select(view, focus = true) {
  for (const name of VIEWS) {
    const tab = $(`#tab-${name}`);
    const chosen = name === view;
    tab.setAttribute("aria-selected", String(chosen));
    tab.tabIndex = chosen ? 0 : -1;
    if (chosen && focus) tab.focus();
  }
  showPanels();
}

// the panel of the chosen view, when there are hits to view (no analysis panels without hits)
function showPanels() {
  const view = activeView();
  const hits = Boolean(current) && current.total > 0;
  for (const name of VIEWS) $(`#panel-${name}`).hidden = name !== view || (name !== "kwic" && !hits);
}

function showSortControls() {
  const on = value("sort-on");
  for (const id of ["sort-attribute", "sort-direction", "sort-fold"]) document.getElementById(id).closest("label").hidden = !on || on === "random";
}

const number = (n) => n.toLocaleString("en");
const decimal = (n, digits = 2) => n.toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits });
let analysing = null; // the AbortController of the analysis in flight
let analysed = {}; // view -> the request last shown (not fetched again when a tab is revisited)

function analysisRequest(view) {
  const params = new URLSearchParams(current.params);
  if (view === "frequency") {
    params.set("by", value("freq-by"));
    if (value("freq-on")) params.set("on", value("freq-on"));
    const fold = `${value("freq-fold-c") ? "c" : ""}${value("freq-fold-d") ? "d" : ""}`;
    if (fold) params.set("fold", fold);
  } else if (view === "distribution") {
    params.set("by", value("dist-by"));
    params.set("order", value("dist-order"));
  } else {
    params.set("attribute", value("coll-attribute"));
    params.set("window", value("coll-window") || "5");
    params.set("within", value("coll-within"));
    params.set("min_freq", value("coll-min") || "1");
    params.set("order", collOrder);
  }
  return params;
}

// the request of one page of an analysis table
function pageRequest(view) {
  const params = analysisRequest(view);
  params.set("offset", String(tableOffset[view]));
  params.set("limit", String(ROWS[view]));
  return params;
}

// "rows 31–60 of 219,266" with ← Previous / Next →: every row of a large table is a page away
function showPager(view, body) {
  const pager = $(`#${PREFIX[view]}-pager`);
  const first = body.offset + 1;
  const last = body.offset + body.rows.length;
  pager.hidden = body.rows_total <= ROWS[view] && body.offset === 0;
  pager.querySelector(".range").textContent = body.rows.length
    ? `rows ${number(first)}–${number(last)} of ${number(body.rows_total)}` : `no rows from ${number(first)} on (${number(body.rows_total)} in all)`;
  pager.querySelector(".prev").disabled = body.offset === 0;
  pager.querySelector(".next").disabled = last >= body.rows_total;
}

function turnPage(view, step) {
  tableOffset[view] = Math.max(0, tableOffset[view] + step * ROWS[view]);
  if (current) history.replaceState(null, "", pageUrl(current.params));
  analyse();
}

const PREFIX = { frequency: "freq", distribution: "dist", collocations: "coll" };

async function analyse() {
  const view = activeView();
  if (view === "kwic" || !current || current.total === 0) return;
  const params = pageRequest(view);
  if (analysed[view] === params.toString()) return;
  const prefix = PREFIX[view];
  const summary = $(`#${prefix}-summary`);
  analysing?.abort();
  analysing = new AbortController();
  summary.textContent = "Counting…";
  $("#results").setAttribute("aria-busy", "true");
  try {
    const answer = await fetch(`/api/v1/${view}?${params}`, { signal: analysing.signal });
    const body = await answer.json();
    if (!answer.ok) {
      summary.textContent = body.detail || body.title || "the analysis failed";
      $(`#${prefix}-table`).hidden = true;
      $(`#${prefix}-download`).hidden = true;
      $(`#${prefix}-pager`).hidden = true;
      if (view === "distribution") $("#dist-figure").hidden = true;
      return;
    }
    ({ frequency: showFrequency, distribution: showDistribution, collocations: showCollocations })[view](body);
    showPager(view, body);
    if (!body.complete) summary.textContent += ` Incomplete: partition(s) ${body.failed.join(", ")} did not answer; their hits are not counted.`;
    const file = analysisRequest(view); // the whole table, every row
    file.set("format", "tsv");
    file.set("provenance", "1");
    const link = $(`#${prefix}-download`);
    link.href = `/api/v1/${view}?${file}`;
    link.setAttribute("download", "");
    link.hidden = false;
    analysed[view] = params.toString();
    document.body.dataset.analysed = view;
  } catch (error) {
    summary.textContent = error.name === "AbortError" ? "Cancelled." : `The analysis failed: ${error.message}`;
  } finally {
    $("#results").setAttribute("aria-busy", "false");
    analysing = null;
  }
}

function cell(row, text, className) {
  const td = row.insertCell();
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function linked(row, text, href, label) {
  const td = row.insertCell();
  td.className = "value";
  if (href) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text === "" ? "(empty)" : text;
    a.title = label;
    td.append(a);
  } else td.textContent = text;
}

function showFrequency(body) {
  const on = $("#freq-on").selectedOptions[0].textContent;
  $("#freq-summary").textContent = `${body.by} of ${on}: ${number(body.distinct)} distinct values over ${number(body.counted)} hits` +
    (body.unset ? `; ${number(body.unset)} hits have no such token` : "") +
    (body.truncated ? "; too many distinct values: the list is cut" : "") + ".";
  const rows = body.rows.map((r, i) => {
    const row = document.createElement("tr");
    cell(row, number(body.offset + i + 1), "rank");
    linked(row, r.value, r.concordance, `Show the ${number(r.frequency)} hits with ${body.by} ${r.value}`);
    cell(row, number(r.frequency));
    cell(row, `${decimal(100 * r.share)} %`);
    cell(row, decimal(r.per_million));
    return row;
  });
  $("#freq-table tbody").replaceChildren(...rows);
  $("#freq-table").hidden = rows.length === 0;
}

const SVG = "http://www.w3.org/2000/svg";
const CHART_ROWS = 30; // bars a chart draws at most: a page of the distribution table

function svg(name, attributes, text) {
  const element = document.createElementNS(SVG, name);
  for (const [key, val] of Object.entries(attributes)) element.setAttribute(key, String(val));
  if (text !== undefined) element.textContent = text;
  return element;
}

function showDistribution(body) {
  const hits = body.total - body.outside;
  $("#dist-summary").textContent = `${number(hits)} hits over ${number(body.rows_total)} values of ${body.by}` +
    (body.outside ? `; ${number(body.outside)} hits lie outside any ${body.by} region` : "") +
    (body.rows_total > body.rows.length ? `; chart and table show ${body.rows.length} values a page, the download all` : "") + ".";
  // the chart: one bar per value of the page, its length the hits per million tokens of that value's subcorpus
  const shown = body.rows.slice(0, CHART_ROWS);
  const top = Math.max(...shown.map((r) => r.per_million), 0) || 1;
  const line = 26;
  const chart = svg("svg", { width: "100%", height: shown.length * line + 4, role: "group",
    "aria-label": `Hits per million tokens by ${body.by}`, class: "bars" });
  shown.forEach((r, i) => {
    const y = i * line + 2;
    const name = r.value === "" ? "(no value)" : r.value;
    const link = svg("a", { href: r.concordance });
    link.append(svg("title", {}, `${name}: ${number(r.hits)} hits in ${number(r.tokens)} tokens, ${decimal(r.per_million)} per million — show these hits`));
    const label = name.length > 28 ? `${name.slice(0, 27)}…` : name;
    link.append(svg("text", { x: "27%", y: y + 16, "text-anchor": "end", class: "label" }, label));
    const width = (58 * r.per_million) / top;
    link.append(svg("rect", { x: "28%", y: y + 3, width: `${Math.max(width, r.hits ? 0.3 : 0)}%`, height: 17, rx: 2 }));
    link.append(svg("text", { x: `${28.6 + width}%`, y: y + 16, class: "figure" }, `${decimal(r.per_million)} (${number(r.hits)})`));
    chart.append(link);
  });
  $("#dist-chart").replaceChildren(chart);
  $("#dist-figure").hidden = shown.length === 0;
  const rows = body.rows.map((r) => {
    const row = document.createElement("tr");
    linked(row, r.value, r.concordance, `Show the ${number(r.hits)} hits in ${body.by} ${r.value}`);
    cell(row, number(r.hits));
    cell(row, number(r.tokens));
    cell(row, decimal(r.per_million));
    cell(row, number(r.regions));
    cell(row, number(r.regions_with_hits));
    return row;
  });
  $("#dist-table tbody").replaceChildren(...rows);
  $("#dist-table").hidden = rows.length === 0;
}

const MEASURE_NAMES = { f: "Co-occurrences", log_likelihood: "Log-likelihood", mi: "MI", mi3: "MI³", t_score: "t-score",
  z_score: "z-score", dice: "Dice", log_dice: "logDice", min_sensitivity: "Min. sensitivity" };

function showCollocations(body) {
  $("#coll-summary").textContent = `${number(body.candidates)} collocates of ${number(body.total)} hits within ${body.left} tokens left and ${body.right} right` +
    `${body.within ? ` (inside one ${body.within})` : ""}; ${number(body.f1)} tokens in the windows` +
    `; ${number(body.rows_total)} with at least ${number(body.min_freq)} co-occurrences, ranked by ${MEASURE_NAMES[body.order]}.`;
  const head = document.createElement("tr");
  const th = (text, key) => {
    const cellHead = document.createElement("th");
    cellHead.scope = "col";
    if (!key) {
      cellHead.textContent = text;
    } else {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.textContent = text;
      button.dataset.order = key;
      button.addEventListener("click", () => {
        collOrder = key;
        tableOffset.collocations = 0;
        history.replaceState(null, "", pageUrl(current.params));
        analyse();
      });
      if (key === body.order) cellHead.setAttribute("aria-sort", "descending");
      cellHead.append(button);
    }
    head.append(cellHead);
  };
  th("Collocate");
  th(MEASURE_NAMES.f, "f");
  th("In the corpus");
  for (const measure of body.measures) th(MEASURE_NAMES[measure], measure);
  $("#coll-table thead").replaceChildren(head);
  const rows = body.rows.map((r) => {
    const row = document.createElement("tr");
    linked(row, r.value, r.concordance, `Show the hits with ${r.value} in their window`);
    cell(row, number(r.f));
    cell(row, number(r.marginal));
    for (const measure of body.measures) {
      const score = cell(row, decimal(r.scores[measure]));
      score.title = String(r.scores[measure]);
    }
    return row;
  });
  $("#coll-table tbody").replaceChildren(...rows);
  $("#coll-table").hidden = rows.length === 0;
}

// ---------------------------------------------------------------- the user's last searches

async function loadHistory() {
  const list = $("#history-list");
  if (!list) return; // anonymous: no history
  const answer = await fetch("/api/v1/history");
  if (!answer.ok) return;
  const { data } = await answer.json();
  list.replaceChildren(
    ...data.map((past) => {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = past.url;
      link.textContent = `${past.q}`;
      item.append(link, ` — ${past.corpus}, ${past.syntax}${past.ignore_case ? ", ignore case" : ""}` +
        `${past.filters.length ? `, ${past.filters.join(", ")}` : ""}: ${past.total.toLocaleString("en")} hits`);
      return item;
    }),
  );
}

// ---------------------------------------------------------------- the download dialog

const dialog = $("#download");
const BROWSER_LIMIT = Number(dialog.dataset.browserLimit);
const API_LIMIT = Number(dialog.dataset.apiLimit);
const REGION_NAMES = { s: "the whole sentence (s)", p: "the whole paragraph (p)" };

function openDownload() {
  const info = corpusInfo();
  $("#dl-show").replaceChildren(...info.p_attributes.filter((a) => a !== "word").map((a) => checkbox("show", a, a === "lemma")));
  $("#dl-meta").replaceChildren(...info.meta.map((a) => checkbox("meta", a, /url|id$/.test(a))));
  // a region as context: the sentence is what Calf needs (with the page's URL) to find a line on the web
  const regions = info.s_attributes.filter((a) => !info.meta.includes(a) && a !== "text");
  const kind = $("#dl-context-kind");
  const kept = kind.value;
  kind.replaceChildren(new Option("tokens each side", "tokens"),
    ...regions.map((r) => new Option(REGION_NAMES[r] || `the whole ${r} region`, r)));
  kind.value = [...kind.options].some((o) => o.value === kept) ? kept : "tokens";
  const sample = current.sample;
  $("#dl-rows").disabled = Boolean(sample);
  $("#dl-rows").value = String(sample ? current.total < sample.size ? current.total : sample.size
    : Math.min(BROWSER_LIMIT, current.total || 1));
  $("#dl-what").textContent = sample
    ? `The random sample shown: ${Math.min(sample.size, current.total)} of ${number(current.total)} hits, drawn with seed ${sample.seed}.`
    : `The hits in ${current.order ? "the order shown" : "corpus order"}, from the first; ${number(current.total)} in all.`;
  $("#dl-progress").textContent = "";
  showContextKind();
  checkRows();
  updateCurl();
  dialog.showModal();
}

function checkbox(group, name, checked) {
  const label = document.createElement("label");
  label.className = "choice";
  const box = document.createElement("input");
  box.type = "checkbox";
  box.name = group;
  box.value = name;
  box.checked = checked;
  box.addEventListener("change", updateCurl);
  const text = document.createElement("span");
  text.textContent = name;
  label.append(box, text);
  return label;
}

function showContextKind() {
  const tokens = $("#dl-context-kind").value === "tokens";
  $("#dl-context").hidden = !tokens;
  $("#dl-context").disabled = !tokens;
  const url = corpusInfo().meta.find((m) => /_url$/.test(m));
  $("#dl-calf").hidden = tokens || !url;
  if (url) $("#dl-calf").textContent = `With ${url} ticked, each line of this file is a sentence Calf can find on its web page.`;
}

// the download's parameters: the search shown as it is shown (its sample, or its order), and the dialog's choices
function exportParams(format = $("#dl-format").value) {
  const params = new URLSearchParams(current.params);
  if (current.sample) {
    params.set("sample", String(current.sample.size));
    params.set("seed", String(current.sample.seed));
  } else if (current.order) {
    params.set("sort", current.order.sort);
    params.set("direction", current.order.direction);
    if (current.order.sort === "random") params.set("seed", "1");
  }
  const pick = (selector) => [...document.querySelectorAll(selector)].filter((b) => b.checked).map((b) => b.value);
  const show = pick('#dl-show input[name="show"]');
  const meta = pick('#dl-meta input[name="meta"]');
  if (show.length) params.set("show", show.join(","));
  if (meta.length) params.set("meta", meta.join(","));
  const kind = $("#dl-context-kind").value;
  params.set("context", kind === "tokens" ? $("#dl-context").value || "10" : kind);
  params.set("format", format);
  if ($("#dl-provenance").checked) params.set("provenance", "1");
  return params;
}

// how many hits the browser may download; more go through the API (the curl line)
function checkRows() {
  const rows = Number($("#dl-rows").value);
  const bad = !current.sample && (!Number.isInteger(rows) || rows < 1 || rows > BROWSER_LIMIT);
  $("#dl-rows-error").hidden = !bad;
  $("#dl-rows-error").textContent = bad ? (rows > BROWSER_LIMIT
    ? `At most ${number(BROWSER_LIMIT)} hits in the browser; for more, use the API (the curl line below).`
    : "Give a whole number of hits, at least 1.") : "";
  $("#dl-rows").setAttribute("aria-invalid", String(bad));
  $("#dl-start").disabled = bad || downloading !== null;
  return !bad;
}

function updateCurl() {
  const params = exportParams();
  if (!current.sample) params.set("limit", String(Math.max(1, Math.min(API_LIMIT, current.total))));
  $("#dl-curl").textContent = `curl --fail-with-body -OJ -H "Authorization: Bearer $COWBIRD_TOKEN" '${location.origin}/api/v1/export?${params}'`;
}

let downloading = null;
async function startDownload() {
  if (!checkRows()) return;
  const params = exportParams();
  if (!current.sample) params.set("limit", $("#dl-rows").value);
  downloading = new AbortController();
  const progress = $("#dl-progress");
  progress.textContent = "Starting…";
  $("#dl-start").disabled = true;
  $("#dl-cancel").hidden = false;
  try {
    const answer = await fetch(`/api/v1/export?${params}`, { signal: downloading.signal });
    if (!answer.ok) {
      const problem = await answer.json();
      progress.textContent = problem.detail || problem.title;
      return;
    }
    const rows = Number(answer.headers.get("x-cowbird-rows"));
    const reader = answer.body.getReader();
    const chunks = [];
    let bytes = 0;
    let lines = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.length;
      for (const byte of value) if (byte === 10) lines += 1;
      progress.textContent = `${Math.min(lines, rows).toLocaleString("en")} of ${rows.toLocaleString("en")} rows (${Math.round(bytes / 1024)} KB)`;
    }
    const name = /filename="([^"]+)"/.exec(answer.headers.get("content-disposition") || "")?.[1] || "cowbird-export";
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob(chunks, { type: answer.headers.get("content-type") || "" }));
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    progress.textContent = `Saved ${name}`;
  } catch (error) {
    progress.textContent = error.name === "AbortError" ? "Download cancelled." : `The download failed: ${error.message}`;
  } finally {
    downloading = null;
    $("#dl-cancel").hidden = true;
    checkRows();
  }
}

function closeDownload() {
  downloading?.abort();
  dialog.close();
}

// ---------------------------------------------------------------- wiring

$("#search").addEventListener("submit", (event) => {
  event.preventDefault();
  showCorpusProblem(null);
  preview({ push: true });
});
$("#cancel").addEventListener("click", () => running?.abort());
$("#prev").addEventListener("click", () => preview({ offset: Math.max(0, current.offset - PAGE), push: true }));
$("#next").addEventListener("click", () => preview({ offset: current.offset + PAGE, push: true }));
$("#random").addEventListener("click", () => preview({ sample: { size: PAGE, seed: Math.floor(Math.random() * 2 ** 31) }, push: true }));
$("#open-download").addEventListener("click", openDownload);
$("#dl-start").addEventListener("click", startDownload);
$("#dl-cancel").addEventListener("click", () => downloading?.abort());
$("#dl-close").addEventListener("click", closeDownload);
dialog.addEventListener("cancel", () => downloading?.abort()); // Escape
$("#dl-rows").addEventListener("input", () => {
  checkRows();
  updateCurl();
});
$("#dl-context").addEventListener("input", updateCurl);
$("#dl-context-kind").addEventListener("change", () => {
  showContextKind();
  updateCurl();
});
$("#dl-format").addEventListener("change", updateCurl);
$("#dl-provenance").addEventListener("change", updateCurl);
$("#add-filter").addEventListener("click", () => addFilter().querySelector("input").focus());
$("#corpus").addEventListener("change", () => {
  showCorpusProblem(null);
  describeCorpus();
});
// any change to the form (query, syntax, case, corpus, filters) makes the CQP line wait for its translation
let typing = null;
function formChanged() {
  pendingTranslation();
  clearTimeout(typing);
  typing = setTimeout(translate, 150);
}
$("#search").addEventListener("input", formChanged);
$("#search").addEventListener("change", formChanged);
$("#filter-rows").addEventListener("click", (event) => {
  if (event.target.closest("button.remove")) formChanged();
});
for (const view of VIEWS) {
  $(`#tab-${view}`).addEventListener("click", () => {
    select(view);
    if (current) history.replaceState(null, "", pageUrl(current.params));
    analyse();
  });
}
for (const view of Object.keys(ROWS)) {
  $(`#${PREFIX[view]}-pager .prev`).addEventListener("click", () => turnPage(view, -1));
  $(`#${PREFIX[view]}-pager .next`).addEventListener("click", () => turnPage(view, 1));
}
$("#views").addEventListener("keydown", (event) => { // arrow keys move between the tabs
  const step = { ArrowRight: 1, ArrowLeft: -1, Home: -VIEWS.length, End: VIEWS.length }[event.key];
  if (step === undefined) return;
  event.preventDefault();
  const index = Math.min(VIEWS.length - 1, Math.max(0, VIEWS.indexOf(activeView()) + step));
  $(`#tab-${VIEWS[index]}`).click();
});
// settings changed in quick succession start one request, not one each (a viewer runs few at once)
let settling = null;
function settle(action) {
  clearTimeout(settling);
  settling = setTimeout(action, 200);
}
for (const id of ["sort-on", "sort-attribute", "sort-direction", "sort-fold"]) {
  document.getElementById(id).addEventListener("change", () => {
    showSortControls();
    settle(() => preview({ push: true }));
  });
}
for (const id of Object.keys(SETTINGS).filter((key) => !key.startsWith("sort-"))) {
  document.getElementById(id).addEventListener("change", () => {
    const view = Object.keys(PREFIX).find((v) => id.startsWith(`${PREFIX[v]}-`));
    if (view) tableOffset[view] = 0; // another table: from its first row
    if (current) history.replaceState(null, "", pageUrl(current.params));
    settle(analyse);
  });
}
window.addEventListener("popstate", () => restore(new URLSearchParams(location.search)));
describeCorpus();
for (const id of Object.keys(SETTINGS)) defaults[id] = value(id);
restore(new URLSearchParams(location.search));
translate();
loadHistory();
