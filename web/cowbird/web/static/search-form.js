// @ts-check
// The search form: the search it states, the corpus's attributes, the metadata filters, the live
// CQP line (what /api/v1/query would run, translated by the server) and the target and keyword the
// query marks (as the server reports them), offered for sorting and counting.

import { ApiProblem, aborted, begin, cancel, end, getJson } from "./search-api.js";
import { periodOf, periodRegex } from "./search-chart.js";
import { fillDeclared } from "./search-declared.js";
import { CORPORA, byId, corpusInfo, fromTemplate, part } from "./search-dom.js";
import { SORT_LEVELS, sameSearch, searchParams, setTimer, state } from "./search-state.js";

/** @typedef {import("./search-state.js").Search} Search */
/** @typedef {import("./search-state.js").Filter} Filter */
/** @typedef {import("./search-state.js").Anchor} Anchor */
/** @typedef {import("./search-api.js").Problem} Problem */

/** @typedef {import("./api-types").Translation} Translation  GET /api/v1/translate's answer */

/** @returns {Search} the search the form states (filters without a regex left out) */
export function readSearch() {
  const filters = [...document.querySelectorAll("#filter-rows .filter")]
    .map((row) => ({
      attribute: part(row, "select.attribute", HTMLSelectElement).value,
      negated: part(row, "select.operator", HTMLSelectElement).value.startsWith("!"),
      regex: rowOperator(row) === ":" ? rangeText(row) : sentRegex(row),
      operator: rowOperator(row),
    }))
    .filter((f) => f.regex !== "");
  const syntax = part(document, 'input[name="syntax"]:checked', HTMLInputElement).value === "cqp" ? "cqp" : "simple";
  const more = [...document.querySelectorAll("#more-corpora-list input:checked")]
    .map((box) => (box instanceof HTMLInputElement ? box.value : ""))
    .filter((name) => name && name !== byId("corpus", HTMLSelectElement).value);
  return {
    corpus: [byId("corpus", HTMLSelectElement).value, ...more].join(","),
    q: byId("q", HTMLInputElement).value,
    syntax,
    ignore_case: byId("ignore_case", HTMLInputElement).checked,
    filters,
  };
}

/**
 * Fills the form with a search. A corpus not open to the viewer leaves the corpus chooser as it is.
 * @param {Search} search
 * @returns {boolean} whether the search's corpus is one of the page's
 */
export function applySearch(search) {
  const [first, ...more] = search.corpus.split(",");
  const open = [first, ...more].every((name) => CORPORA.some((c) => c.name === name));
  if (open) {
    byId("corpus", HTMLSelectElement).value = first;
    fillMoreCorpora(more);
  }
  byId("q", HTMLInputElement).value = search.q;
  part(document, `input[name="syntax"][value="${search.syntax}"]`, HTMLInputElement).checked = true;
  byId("ignore_case", HTMLInputElement).checked = search.ignore_case;
  byId("filter-rows", HTMLElement).replaceChildren();
  for (const filter of search.filters) addFilter(filter);
  describeCorpus();
  return open;
}

// ---------------------------------------------------------------- metadata columns

/**
 * The metadata columns' boxes (one per s-attribute with values), ticked as the setting says; the
 * setting (#kwic-meta, in the URL as column=) follows the boxes.
 * @param {string[]} meta
 */
function fillColumns(meta) {
  const setting = byId("kwic-meta", HTMLInputElement);
  const chosen = setting.value.split(",").filter((name) => meta.includes(name));
  setting.value = chosen.join(",");
  byId("kwic-meta-boxes", HTMLElement).replaceChildren(...meta.map((name) => {
    const label = fromTemplate("choice-template", HTMLLabelElement);
    const box = part(label, "input", HTMLInputElement);
    box.name = "column";
    box.value = name;
    box.checked = chosen.includes(name);
    box.addEventListener("change", () => {
      setting.value = [...document.querySelectorAll('#kwic-meta-boxes input[name="column"]:checked')]
        .map((b) => (b instanceof HTMLInputElement ? b.value : "")).join(",");
      setting.dispatchEvent(new Event("change"));
    });
    part(label, "span", HTMLElement).textContent = name;
    return label;
  }));
}

/** The boxes ticked as the setting now says (after the URL set it). */
export function syncColumns() {
  const chosen = byId("kwic-meta", HTMLInputElement).value.split(",");
  for (const box of document.querySelectorAll('#kwic-meta-boxes input[name="column"]')) {
    if (box instanceof HTMLInputElement) box.checked = chosen.includes(box.value);
  }
}

// ---------------------------------------------------------------- the corpus

/**
 * The other corpora, each a box to search it too; `ticked`: those to tick (default: as they are).
 * @param {string[]} [ticked]
 */
export function fillMoreCorpora(ticked) {
  const main = byId("corpus", HTMLSelectElement).value;
  const list = byId("more-corpora-list", HTMLElement);
  const was = ticked ?? [...list.querySelectorAll("input:checked")].map((b) => (b instanceof HTMLInputElement ? b.value : ""));
  list.replaceChildren(...CORPORA.filter((c) => c.name !== main).map((c) => {
    const choice = fromTemplate("choice-template", HTMLLabelElement);
    const box = part(choice, "input", HTMLInputElement);
    box.value = c.name;
    box.checked = was.includes(c.name);
    part(choice, "span", HTMLElement).textContent = c.title || c.name;
    return choice;
  }));
  if (was.length) byId("more-corpora", HTMLDetailsElement).open = true;
  byId("more-corpora", HTMLElement).hidden = CORPORA.length < 2;
}

/** Says what the chosen corpus is and holds, and fills every chooser of its attributes. */
export function describeCorpus() {
  const info = corpusInfo();
  byId("corpus-description", HTMLElement).textContent = info.description || "";
  // each attribute a query, a filter or a download can name, with what it holds (its tagset) where the corpus says
  /**
   * @param {string} name
   * @param {string} kind
   */
  const described = (name, kind) => {
    const term = document.createElement("dt");
    term.textContent = name;
    const text = document.createElement("dd");
    text.textContent = info.attributes?.[name] || kind;
    return [term, text];
  };
  byId("attribute-list", HTMLElement).replaceChildren(...info.p_attributes.flatMap((a) => described(a, "token attribute")),
    ...info.meta.flatMap((a) => described(a, "metadata (filters, distributions, downloads)")));
  for (const select of document.querySelectorAll("#filter-rows select.attribute")) {
    if (select instanceof HTMLSelectElement) fillMeta(select, select.value);
  }
  /**
   * @param {string} id
   * @param {string[]} names
   * @param {string | undefined} preferred
   */
  const fill = (id, names, preferred) => {
    const element = byId(id, HTMLSelectElement);
    const keep = names.includes(element.value) ? element.value : names.find((n) => n === preferred) || names[0] || "";
    element.replaceChildren(...names.map((name) => {
      const option = new Option(name, name, false, name === keep);
      const about = info.attributes?.[name];
      if (about) option.title = about; // what the attribute holds (its tagset), where it is chosen
      return option;
    }));
    element.value = keep;
  };
  for (const level of SORT_LEVELS) fill(`sort-attribute${level}`, info.p_attributes, "word");
  // tokens as word, word/ATTRIBUTE for each attribute, and word/every/attribute (CQPweb's word/tag display)
  const others = info.p_attributes.filter((a) => a !== "word");
  const ways = ["", ...others, ...(others.length > 1 ? [others.join(",")] : [])];
  const inline = byId("kwic-inline", HTMLSelectElement);
  const was = inline.value;
  inline.replaceChildren(...ways.map((way) => new Option(["word", ...(way ? way.split(",") : [])].join("/"), way)));
  inline.value = ways.includes(was) ? was : "";
  fillColumns(info.meta);
  fill("freq-by", info.p_attributes, "word"); // the match's word: it varies where a lemma may not
  const second = byId("freq-by-2", HTMLSelectElement); // "nothing more", or a second key of the breakdown
  const chosen = info.p_attributes.includes(second.value) ? second.value : "";
  second.replaceChildren(new Option("nothing more", ""), ...info.p_attributes.map((name) => new Option(name, name)));
  second.value = chosen;
  fill("coll-attribute", info.p_attributes, "lemma");
  fill("dist-by", info.meta, info.meta.find((m) => /genre|year|date/.test(m)) || info.meta[0]);
  // a trend's dates: as the API's default, the first *_year, then *_date, then *lastmod*
  const dated = [/(^|_)year$/, /(^|_)date$/, /lastmod/].map((test) => info.meta.find((m) => test.test(m))).find(Boolean);
  fill("trend-by", info.meta, dated || info.meta[0]);
  fill("cmp-by", info.p_attributes, "word");
  const corpora = byId("cmp-corpus", HTMLSelectElement); // another corpus to compare with, or the same
  const other = corpora.value;
  corpora.replaceChildren(new Option("the same corpus", ""),
    ...CORPORA.filter((c) => c.name !== info.name).map((c) => new Option(c.title || c.name, c.name)));
  corpora.value = CORPORA.some((c) => c.name === other && c.name !== info.name) ? other : "";
  const regions = info.s_attributes.filter((a) => !info.meta.includes(a));
  fill("disp-parts", regions, "text"); // the parts of the dispersion: texts, sentences ...
  const within = byId("coll-within", HTMLSelectElement);
  const kept = within.value;
  within.replaceChildren(...[...regions, "none"].map((r) => new Option(r === "none" ? "no limit" : r, r)));
  within.value = [...regions, "none"].includes(kept) ? kept : regions.includes("text") ? "text" : "none";
  fillDeclared(info); // the declared analyses' attributes
}

/**
 * A corpus named in the URL that the viewer cannot use is said to be so, in the API's words, whether
 * it does not exist or needs a login; nothing runs on another corpus in its place.
 * @param {string | null} name  the corpus, or null: no problem
 */
export function showCorpusProblem(name) {
  const notice = byId("corpus-problem", HTMLElement);
  notice.hidden = name === null;
  notice.replaceChildren();
  if (name === null) return;
  notice.append(`There is no corpus '${name}' open to you: it does not exist, or it needs a login or a group's right.`);
  if (!document.getElementById("history-list")) { // anonymous
    const link = document.createElement("a");
    link.href = "/login";
    link.textContent = "Log in";
    notice.append(" ", link, " to see the corpora open to your account.");
  }
}

// ---------------------------------------------------------------- filters

/**
 * @param {HTMLSelectElement} select
 * @param {string} chosen
 */
function fillMeta(select, chosen) {
  select.replaceChildren(...corpusInfo().meta.map((name) => new Option(name, name, false, name === chosen)));
}

/**
 * A filter row more (from the page's #filter-template), empty or with this filter.
 * @param {Filter} [filter]
 * @returns {HTMLElement} the row
 */
export function addFilter(filter = { attribute: "", negated: false, regex: "" }) {
  const row = fromTemplate("filter-template", HTMLElement);
  const index = document.querySelectorAll("#filter-rows .filter").length + 1;
  const attribute = part(row, "select.attribute", HTMLSelectElement);
  const operator = part(row, "select.operator", HTMLSelectElement);
  const regex = part(row, "input", HTMLInputElement);
  const remove = part(row, "button.remove", HTMLButtonElement);
  attribute.setAttribute("aria-label", `Filter ${index}: attribute`);
  operator.setAttribute("aria-label", `Filter ${index}: condition`);
  regex.setAttribute("aria-label", `Filter ${index}: regular expression`);
  remove.setAttribute("aria-label", `Remove filter ${index}`);
  fillMeta(attribute, filter.attribute);
  operator.value = `${filter.negated ? "!" : ""}${filter.operator ?? "~"}`;
  if (!operator.value) operator.value = "~"; // an operator the row has not (a negated range): matches
  regex.value = filter.regex;
  operator.addEventListener("change", () => showOperator(row, index));
  showOperator(row, index);
  if (filter.operator === ":") {
    const [from, to] = filter.regex.split("..");
    part(row, "input.from", HTMLInputElement).value = from ?? "";
    part(row, "input.to", HTMLInputElement).value = to ?? "";
    regex.value = "";
  }
  if (!filter.negated && (filter.operator ?? "~") === "~") showPeriod(row, filter.regex);
  remove.addEventListener("click", () => row.remove());
  byId("filter-rows", HTMLElement).append(row);
  return row;
}

/**
 * A trend point's filter on dates (its period's exact regular expression, periodRegex) shown as what
 * it means: "text_lastmod in the year 2005", the operator the period's and the field the period
 * itself; the field can be changed to another period, and the exact expression is what is sent
 * (sentRegex). (A year whose texts have just the year as value comes as an equals filter, text_year=2005.)
 * @param {HTMLElement} row
 * @param {string} regex
 */
function showPeriod(row, regex) {
  const found = periodOf(regex);
  if (!found) return;
  const operator = part(row, "select.operator", HTMLSelectElement);
  const option = new Option(`in the ${found.period}`, `period:${found.period}`, true, true);
  option.title = `every value dated in the ${found.period} (2005, 2005-05-04, 20050504, …)`;
  operator.append(option);
  operator.value = option.value;
  const field = part(row, "input", HTMLInputElement);
  field.value = found.key;
  field.title = `The ${found.period} (${found.key}): sent as the regular expression ${regex}`;
}

/**
 * The regular expression a filter row sends: its field's, or with a period's operator (showPeriod) the
 * exact expression of the period in its field.
 * @param {Element} row
 * @returns {string}
 */
function sentRegex(row) {
  const operator = part(row, "select.operator", HTMLSelectElement).value;
  const value = part(row, "input", HTMLInputElement).value;
  const period = operator.startsWith("period:") ? operator.slice("period:".length) : "";
  return (period === "year" || period === "month" || period === "decade") && value.trim()
    ? periodRegex(value.trim(), period) : value;
}

/**
 * A filter row's operator as the API writes it: "=" (equals, does not equal), ":" (from – to) or "~"
 * (matches, does not match, a trend period's "=").
 * @param {Element} row
 * @returns {import("./search-state.js").FilterOperator}
 */
function rowOperator(row) {
  const operator = part(row, "select.operator", HTMLSelectElement).value;
  return operator === "=" || operator === "!=" ? "=" : operator === ":" ? ":" : "~";
}

/**
 * A from – to row's range as the API writes it, `from..to` (an empty end open; both empty: "", no filter).
 * @param {Element} row
 * @returns {string}
 */
function rangeText(row) {
  const range = row.querySelector(".range");
  if (!range) return "";
  const from = part(range, "input.from", HTMLInputElement).value.trim();
  const to = part(range, "input.to", HTMLInputElement).value.trim();
  return from || to ? `${from}..${to}` : "";
}

/**
 * The fields of a row's operator: two number fields for from – to (from the page's #filter-range,
 * there only then), else the one text field, labelled for what it holds (a regular expression, or a
 * value written as it is).
 * @param {HTMLElement} row
 * @param {number} index
 */
function showOperator(row, index) {
  const operator = rowOperator(row);
  const field = part(row, "input.value", HTMLInputElement);
  field.hidden = operator === ":";
  const range = row.querySelector(".range");
  if (operator === ":" && !range) {
    const made = fromTemplate("filter-range", HTMLElement);
    part(made, "input.from", HTMLInputElement).setAttribute("aria-label", `Filter ${index}: from (a number; empty: any)`);
    part(made, "input.to", HTMLInputElement).setAttribute("aria-label", `Filter ${index}: to (a number; empty: any)`);
    field.after(made);
  } else if (operator !== ":" && range) {
    range.remove();
  }
  const what = operator === "=" ? "value (exactly as written, no regular expression)" : "regular expression";
  field.placeholder = operator === "=" ? "value" : "regular expression";
  field.setAttribute("aria-label", `Filter ${index}: ${what}`);
}

// ---------------------------------------------------------------- the query's anchors

/**
 * Offers the target (@) and the keyword (@1) for sorting and counting when the query marks them, as
 * the server says (a translation, or a query's result). An answer about a search that is no longer
 * the form's is not used: the form's own answer is on its way.
 * @param {Anchor[]} anchors
 * @param {Search} about  the search the server answered about
 */
export function showAnchors(anchors, about) {
  if (!sameSearch(about, readSearch())) return;
  for (const option of document.querySelectorAll("option[data-anchor]")) {
    if (!(option instanceof HTMLOptionElement)) continue;
    option.hidden = !anchors.some((a) => a === option.dataset.anchor);
    if (option.hidden && option.selected) {
      const select = option.closest("select");
      if (select) select.value = "";
    }
  }
  showSortControls();
}

/**
 * A key's attribute, direction and case are asked for only when the hits are sorted on a token; a
 * second key ("then by", for the first's ties) once the first is set, a third once the second is.
 */
export function showSortControls() {
  let shown = true;
  for (const level of SORT_LEVELS) {
    if (level) byId(`sort-level${level}`, HTMLElement).hidden = !shown;
    const on = byId(`sort-on${level}`, HTMLSelectElement).value;
    /** @type {boolean} */
    const keyed = shown && Boolean(on) && on !== "random" && on !== "gdex";
    for (const id of ["sort-attribute", "sort-direction", "sort-fold"]) {
      const label = byId(`${id}${level}`, HTMLElement).closest("label");
      if (label) label.hidden = !keyed;
    }
    shown = keyed;
  }
}

/**
 * The "then by" choosers offer what the first one does, but a random order or GDEX, and nothing more first;
 * the breakdown's second span chooser offers the first one's spans.
 */
export function fillSortLevels() {
  const spans = byId("freq-on", HTMLSelectElement);
  byId("freq-on-2", HTMLSelectElement).replaceChildren(...[...spans.options].map((o) => /** @type {HTMLOptionElement} */ (o.cloneNode(true))));
  const first = byId("sort-on", HTMLSelectElement);
  for (const level of SORT_LEVELS.slice(1)) {
    const select = byId(`sort-on${level}`, HTMLSelectElement);
    const options = [...first.options].filter((o) => o.value !== "random" && o.value !== "gdex").map((o) => {
      const copy = /** @type {HTMLOptionElement} */ (o.cloneNode(true));
      if (!copy.value) copy.textContent = "nothing more";
      copy.selected = false;
      return copy;
    });
    select.replaceChildren(...options);
    select.value = "";
  }
}

// ---------------------------------------------------------------- the CQP line

/**
 * The CQP line shows what /api/v1/query would run for the form as it is — the server translates it,
 * with the case switch and the filters — and never an earlier query's CQP: it is blanked at once
 * when the form changes (`pendingTranslation`) and filled when the translation of the form as it
 * now is comes back (`translate`). The translation also says which anchors the query marks.
 */
export function pendingTranslation() {
  setCqpLine("…", "pending");
}

/**
 * @param {string} text
 * @param {string} status  empty, pending, translated, error or ran (in data-state, for tests and styles)
 */
export function setCqpLine(text, status) {
  const line = byId("cqp-preview", HTMLElement);
  line.textContent = text;
  line.dataset.state = status;
}

/** Asks the server to translate the form's query (a translation in flight is dropped). */
export async function translate() {
  const search = readSearch();
  cancel("translate");
  if (!search.q.trim()) {
    setCqpLine("", "empty");
    showAnchors([], search);
    return;
  }
  const signal = begin("translate");
  try {
    /** @type {Translation} */
    const body = await getJson("translate", searchParams(search), signal);
    setCqpLine(body.cqp, "translated");
    showAnchors(body.anchors ?? [], search);
  } catch (error) {
    if (aborted(error)) return;
    if (error instanceof ApiProblem) {
      setCqpLine("— (the query has an error)", "error");
      showAnchors([], search); // a query with an error marks nothing
    } else setCqpLine("", "error");
  } finally {
    end("translate", signal);
  }
}

/** Any change to the form (query, syntax, case, corpus, filters) makes the CQP line wait for its translation. */
export function formChanged() {
  pendingTranslation();
  clearTimeout(state.timers.translate);
  setTimer("translate", window.setTimeout(translate, 150));
}

// ---------------------------------------------------------------- the query's errors

/**
 * A failed search in the query box's own terms: a query error with a caret under the offending
 * character, any other problem its detail.
 * @param {Problem} problem
 */
export function showQueryError(problem) {
  const box = byId("query-error", HTMLElement);
  if (problem.offset !== undefined && problem.offset !== null) {
    const text = byId("q", HTMLInputElement).value;
    box.textContent = `${text}\n${" ".repeat(Math.max(0, problem.offset))}^ ${problem.message ?? problem.detail ?? ""}`;
  } else {
    box.textContent = problem.detail || problem.title || "the query failed";
  }
  box.hidden = false;
}

export function hideQueryError() {
  byId("query-error", HTMLElement).hidden = true;
}
