// cowbird's search page: preview a query, then download it. Plain JavaScript, no build step.
// The page talks only to the public API (/api/v1/translate, /query, /export) and keeps the whole
// search in the URL, so that a results page can be bookmarked, shared and reached with Back.
"use strict";

const $ = (selector) => document.querySelector(selector);
const corpora = JSON.parse($("#corpus-data").textContent);
const PAGE = 100;
let running = null; // the AbortController of the query in flight
let current = null; // the search shown: {params, offset, sample, total}

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

function apiParams(state) {
  const params = new URLSearchParams({ corpus: state.corpus, q: state.q, syntax: state.syntax });
  if (state.ignore_case) params.set("ignore_case", "1");
  for (const f of state.filters) params.append("filter", `${f.attribute}${f.negated ? "!~" : "~"}${f.regex}`);
  return params;
}

function restore(params) {
  if (params.has("corpus") && corpora.some((c) => c.name === params.get("corpus"))) {
    $("#corpus").value = params.get("corpus");
  }
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
  preview();
}

// ---------------------------------------------------------------- corpus, filters, live CQP

function describeCorpus() {
  const info = corpusInfo();
  $("#corpus-description").textContent = info.description || "";
  for (const select of document.querySelectorAll("#filter-rows select.attribute")) fillAttributes(select, select.value);
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

let translating = null;
async function translate() {
  const state = formState();
  if (state.syntax === "cqp") {
    $("#cqp-preview").textContent = state.q;
    return;
  }
  if (!state.q.trim()) {
    $("#cqp-preview").textContent = "";
    return;
  }
  translating?.abort();
  translating = new AbortController();
  const params = new URLSearchParams({ q: state.q });
  if (state.ignore_case) params.set("ignore_case", "1");
  try {
    const answer = await fetch(`/api/v1/translate?${params}`, { signal: translating.signal });
    const body = await answer.json();
    $("#cqp-preview").textContent = answer.ok ? body.cqp : "—";
  } catch (error) {
    if (error.name !== "AbortError") $("#cqp-preview").textContent = "";
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

async function preview({ offset = 0, sample = null, push = false } = {}) {
  const state = formState();
  $("#query-error").hidden = true;
  if (!state.q.trim()) return;
  const params = apiParams(state);
  if (push) {
    const url = `/?${params}`;
    if (url !== `${location.pathname}${location.search}`) history.pushState(null, "", url);
  }
  const info = corpusInfo();
  const show = ["lemma", "pos"].filter((a) => info.p_attributes.includes(a));
  const query = new URLSearchParams(params);
  if (show.length) query.set("show", show.join(","));
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
      return;
    }
    const drawn = performance.now();
    render(body, show);
    document.body.dataset.renderMs = String(Math.round(performance.now() - drawn));
    document.body.dataset.queryMs = String(Math.round(drawn - started));
    current = { params, offset, sample, total: body.total };
    if (!sample && offset === 0) loadHistory();
  } catch (error) {
    if (error.name === "AbortError") $("#summary").textContent = "Search cancelled.";
    else showError({ detail: `the search failed: ${error.message}` });
  } finally {
    setBusy(false);
    running = null;
  }
}

function render(body, show) {
  const shown = body.hits.length;
  const first = body.sample ? "" : ` ${body.offset + (shown ? 1 : 0)}–${body.offset + shown} of`;
  $("#summary").textContent = `${body.sample ? `Random sample of ${shown} of` : first} ${body.total.toLocaleString("en")} hits · ${Math.round(body.elapsed_ms)} ms`;
  $("#actions").hidden = false;
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
    match.className = "match";
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

function openDownload() {
  const info = corpusInfo();
  $("#dl-show").replaceChildren(...info.p_attributes.filter((a) => a !== "word").map((a) => checkbox("show", a, a === "lemma")));
  $("#dl-meta").replaceChildren(...info.meta.map((a) => checkbox("meta", a, /url|id$/.test(a))));
  $("#dl-rows").value = String(Math.min(Number($("#dl-rows").max), current?.total || 1));
  $("#dl-progress").textContent = "";
  updateCurl();
  $("#download").showModal();
}

function checkbox(group, name, checked) {
  const label = document.createElement("label");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.name = group;
  box.value = name;
  box.checked = checked;
  box.addEventListener("change", updateCurl);
  label.append(box, ` ${name}`);
  return label;
}

function exportParams() {
  const params = new URLSearchParams(current.params);
  const pick = (selector) => [...document.querySelectorAll(selector)].filter((b) => b.checked).map((b) => b.value);
  const show = pick('#dl-show input[name="show"]');
  const meta = pick('#dl-meta input[name="meta"]');
  if (show.length) params.set("show", show.join(","));
  if (meta.length) params.set("meta", meta.join(","));
  params.set("context", $("#dl-context").value || "10");
  params.set("format", $("#dl-format").value);
  if ($("#dl-provenance").checked) params.set("provenance", "1");
  return params;
}

function updateCurl() {
  const params = exportParams();
  params.set("format", "tsv");
  params.set("limit", "1000000");
  $("#dl-curl").textContent = `curl -OJ -H "Authorization: Bearer $COWBIRD_TOKEN" '${location.origin}/api/v1/export?${params}'`;
}

let downloading = null;
async function startDownload() {
  const params = exportParams();
  params.set("limit", $("#dl-rows").value);
  downloading = new AbortController();
  const progress = $("#dl-progress");
  progress.textContent = "Starting…";
  $("#dl-start").disabled = true;
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
    $("#dl-start").disabled = false;
    downloading = null;
  }
}

// ---------------------------------------------------------------- wiring

$("#search").addEventListener("submit", (event) => {
  event.preventDefault();
  preview({ push: true });
});
$("#cancel").addEventListener("click", () => running?.abort());
$("#prev").addEventListener("click", () => preview({ offset: Math.max(0, current.offset - PAGE) }));
$("#next").addEventListener("click", () => preview({ offset: current.offset + PAGE }));
$("#random").addEventListener("click", () => preview({ sample: { size: PAGE, seed: Math.floor(Math.random() * 2 ** 31) } }));
$("#open-download").addEventListener("click", openDownload);
$("#dl-start").addEventListener("click", startDownload);
$("#dl-cancel").addEventListener("click", () => downloading?.abort());
$("#dl-context").addEventListener("input", updateCurl);
$("#dl-format").addEventListener("change", updateCurl);
$("#dl-provenance").addEventListener("change", updateCurl);
$("#add-filter").addEventListener("click", () => addFilter().querySelector("input").focus());
$("#corpus").addEventListener("change", describeCorpus);
let typing = null;
for (const element of [$("#q"), $("#ignore_case"), ...document.querySelectorAll('input[name="syntax"]')]) {
  element.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(translate, 150);
  });
}
window.addEventListener("popstate", () => restore(new URLSearchParams(location.search)));
restore(new URLSearchParams(location.search));
translate();
loadHistory();
