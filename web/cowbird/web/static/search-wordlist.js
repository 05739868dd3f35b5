// @ts-check
// The word list (GET /api/v1/wordlist): the most frequent words or n-grams of the corpus chosen in
// the form, or of the texts its filters choose — no query needed. With a reference (Compare with),
// keywords (GET /api/v1/keywords): what the corpus or its filtered texts hold more often than the
// reference. Each entry opens its hits; the rows download as TSV, CSV or XLSX with a metadata block
// saying what was counted.

import { ApiProblem, aborted, apiUrl, begin, end, getJson } from "./search-api.js";
import { savedSubcorpora } from "./search-subcorpora.js";
import { CORPORA, byId, controlValue, corpusInfo, decimal, fromTemplate, number, part, setControlValue } from "./search-dom.js";
import { readSearch } from "./search-form.js";
import { filterText, setListed, showInUrl } from "./search-state.js";
import { fillNumbers, fillValue, showRows } from "./search-tables.js";

/** @typedef {import("./api-types").WordListResult} WordListResult */

/** @returns {URLSearchParams} the word list the controls and the form's corpus and filters ask for */
function wordListParams() {
  const search = readSearch();
  const params = new URLSearchParams({
    corpus: search.corpus,
    attribute: byId("wl-attribute", HTMLSelectElement).value,
    n: byId("wl-n", HTMLSelectElement).value,
    min: String(Math.max(1, Number(byId("wl-min", HTMLInputElement).value) || 1)),
    limit: byId("wl-limit", HTMLSelectElement).value,
  });
  const match = byId("wl-match", HTMLInputElement).value;
  if (match) params.set("match", match);
  if (match && byId("wl-ignore-case", HTMLInputElement).checked) params.set("ignore_case", "1");
  for (const f of search.filters) params.append("filter", filterText(f));
  return params;
}

/** @typedef {import("./api-types").KeywordResult} KeywordResult */

/**
 * The keyword list the controls ask for, or null: no reference chosen. "rest" (the texts the one
 * filter leaves out) is the filter negated; "whole" the whole corpus; "corpus:NAME" another corpus.
 * @returns {URLSearchParams | null}
 */
function keywordParams() {
  const choice = byId("wl-reference", HTMLSelectElement).value;
  if (!choice) return null;
  const search = readSearch();
  const params = new URLSearchParams({
    corpus: search.corpus,
    attribute: byId("wl-attribute", HTMLSelectElement).value,
    min: String(Math.max(1, Number(byId("wl-min", HTMLInputElement).value) || 1)),
    limit: byId("wl-limit", HTMLSelectElement).value,
    order: byId("wl-order", HTMLSelectElement).value,
    p: byId("kw-p", HTMLSelectElement).value,
    correction: byId("kw-bonferroni", HTMLInputElement).checked ? "bonferroni" : "none",
    min_log_ratio: String(Math.max(0, Number(byId("kw-min-ratio", HTMLInputElement).value) || 0)),
    smoothing: String(Number(byId("kw-smoothing", HTMLInputElement).value) > 0 ? Number(byId("kw-smoothing", HTMLInputElement).value) : 1),
  });
  for (const f of search.filters) params.append("filter", filterText(f));
  if (choice === "rest") {
    if (search.filters.length !== 1) {
      throw new ApiProblem({ detail: "“The texts the filter leaves out” needs exactly one filter above." });
    }
    const only = search.filters[0];
    params.append("reference_filter", filterText({ ...only, negated: !only.negated }));
  } else if (choice.startsWith("corpus:")) {
    params.set("reference", choice.slice("corpus:".length));
  } else if (choice.startsWith("subcorpus:")) {
    const id = choice.slice("subcorpus:".length);
    const subcorpus = savedSubcorpora().find((s) => s.id === id);
    if (subcorpus) params.set("reference", subcorpus.corpus);
    params.set("reference_subcorpus", id);
  }
  return params;
}

/** The word list's controls whose values live in the URL (under these names) when not at their defaults. */
const LIST_SETTINGS = /** @type {const} */ ({
  "wl-attribute": "wl_attribute", "wl-n": "wl_n", "wl-min": "wl_min", "wl-match": "wl_match",
  "wl-ignore-case": "wl_ignore_case", "wl-limit": "wl_limit", "wl-reference": "wl_reference", "wl-order": "wl_order",
  "kw-p": "kw_p", "kw-bonferroni": "kw_bonferroni", "kw-min-ratio": "kw_min_ratio", "kw-smoothing": "kw_smoothing",
});
/** @type {Record<string, string>} each control's value as the page was built */
const listDefaults = {};

/**
 * The list shown, as the URL writes it: list=1, the settings changed from their defaults, the
 * corpus and the filters it counted in.
 * @returns {URLSearchParams}
 */
function listedUrl() {
  const search = readSearch();
  const url = new URLSearchParams({ list: "1", corpus: search.corpus });
  for (const f of search.filters) url.append("filter", filterText(f));
  for (const [id, name] of Object.entries(LIST_SETTINGS)) {
    const value = controlValue(id);
    if (value !== listDefaults[id]) url.set(name, value);
  }
  return url;
}

/**
 * The word list a URL holds (list=1 and its settings): its controls set, the list opened and counted
 * again — a bookmark, a shared link, Back. Nothing when the URL holds none.
 * @param {URLSearchParams} params
 */
export function restoreWordList(params) {
  if (params.get("list") !== "1") {
    setListed(null);
    return;
  }
  fillAttributes(); // of the corpus the URL names
  fillReferences();
  const reference = params.get("wl_reference");
  if (reference !== null) {
    setControlValue("wl-reference", reference);
    referenceChosen();
  }
  for (const [id, name] of Object.entries(LIST_SETTINGS)) {
    const value = params.get(name);
    setControlValue(id, value ?? listDefaults[id]);
  }
  referenceChosen();
  byId("wordlist", HTMLDetailsElement).open = true;
  void listWords(false);
}

/**
 * Lists the words or n-grams (or the keywords) the controls ask for (a newer list aborts the one
 * counting); the list goes into the URL (a new entry in the history when ``push``).
 * @param {boolean} [push]
 */
export async function listWords(push = true) {
  const signal = begin("wordlist");
  const summary = byId("wl-summary", HTMLElement);
  summary.textContent = "Counting…";
  byId("wordlist", HTMLElement).setAttribute("aria-busy", "true");
  try {
    const keywords = keywordParams();
    if (keywords) {
      showKeywords(/** @type {KeywordResult} */ (await getJson("keywords", keywords, signal)), keywords);
    } else {
      const params = wordListParams();
      showWordList(/** @type {WordListResult} */ (await getJson("wordlist", params, signal)), params);
    }
    setListed(listedUrl());
    showInUrl(push);
  } catch (error) {
    if (aborted(error)) return;
    summary.textContent = error instanceof ApiProblem ? error.message : `The word list failed: ${String(error)}`;
    byId("wl-table", HTMLTableElement).hidden = true;
    byId("kw-table", HTMLTableElement).hidden = true;
    byId("wl-downloads", HTMLElement).hidden = true;
  } finally {
    end("wordlist", signal);
    byId("wordlist", HTMLElement).setAttribute("aria-busy", "false");
  }
}

/**
 * @param {WordListResult} body
 * @param {URLSearchParams} params  what was asked (the downloads ask for the same rows)
 */
function showWordList(body, params) {
  const what = body.n === 1 ? `${body.attribute} values` : `${body.n}-grams of ${body.attribute}`;
  const rows = body.rows.map((row, i) => {
    const line = fromTemplate("wl-row", HTMLTableRowElement);
    part(line, "td.rank", HTMLTableCellElement).textContent = number(i + 1);
    fillValue(line, row.value, row.hits, `Search the ${number(row.frequency)} occurrences of ${row.value}`);
    fillNumbers(line, [number(row.frequency), decimal(row.per_million)]);
    return line;
  });
  showRows("wl-table", rows);
  byId("kw-table", HTMLTableElement).hidden = true;
  const of = body.filters.length ? "tokens in the texts the filters choose" : "tokens";
  const parts = [
    `The ${number(rows.length)} most frequent ${what} in ${number(body.tokens)} ${of}` +
      (body.min > 1 ? `, each at least ${number(body.min)} times` : "") + ".",
  ];
  if (rows.length === 0) parts[0] = `No ${what} ${body.min > 1 ? `occur ${number(body.min)} times or more` : "found"}.`;
  if (body.more) parts.push("More occur: ask for more rows, or raise the minimum.");
  if (!body.complete) parts.push(`Partition(s) ${body.failed.join(", ")} did not answer: their counts are missing.`);
  byId("wl-summary", HTMLElement).textContent = parts.join(" ");
  offerFiles("wordlist", params, rows.length);
}

/**
 * The download links: the same rows as a file, with its metadata block.
 * @param {string} path
 * @param {URLSearchParams} params
 * @param {number} rows
 */
function offerFiles(path, params, rows) {
  for (const format of ["tsv", "csv", "xlsx"]) {
    const file = new URLSearchParams(params);
    file.set("format", format);
    file.set("provenance", "1");
    const link = byId(`wl-${format}`, HTMLAnchorElement);
    link.href = `${apiUrl(path)}?${file}`;
    link.download = "";
  }
  byId("wl-downloads", HTMLElement).hidden = rows === 0;
}

/**
 * @param {KeywordResult} body
 * @param {URLSearchParams} params
 */
function showKeywords(body, params) {
  const rows = body.rows.map((row, i) => {
    const line = fromTemplate("kw-row", HTMLTableRowElement);
    part(line, "td.rank", HTMLTableCellElement).textContent = number(i + 1);
    fillValue(line, row.value, row.hits, `Search the ${number(row.frequency)} occurrences of ${row.value}`);
    fillNumbers(line, [number(row.frequency), decimal(row.per_million), number(row.reference_frequency),
      decimal(row.reference_per_million), decimal(row.log_likelihood),
      `${decimal(row.log_ratio)} (${decimal(row.log_ratio_low)} to ${decimal(row.log_ratio_high)})`,
      decimal(row.simple_maths), decimal(row.diff, 1)]);
    return line;
  });
  showRows("kw-table", rows);
  byId("wl-table", HTMLTableElement).hidden = true;
  const target = body.filters.length ? `the texts the filters choose (${number(body.tokens)} tokens)`
    : `the corpus (${number(body.tokens)} tokens)`;
  const reference = body.reference_filters.length
    ? `the texts of ${body.reference} where ${body.reference_filters.join(", ")} (${number(body.reference_tokens)} tokens)`
    : `${body.reference} (${number(body.reference_tokens)} tokens)`;
  const test = body.p >= 1 ? "every item" : `those significant at p < ${body.p}` +
    (body.correction === "bonferroni" ? ` with the Bonferroni correction (log-likelihood at least ${decimal(body.critical_log_likelihood)})`
      : ` (log-likelihood at least ${decimal(body.critical_log_likelihood)})`);
  const effect = body.min_log_ratio > 0 ? ` and |Log Ratio| at least ${decimal(body.min_log_ratio)}` : "";
  const parts = [`Keywords of ${target} against ${reference}: of ${number(body.compared)} ${body.attribute} values ` +
    `compared, ${test}${effect}: ${number(body.listed)}` + (body.listed > rows.length ? ` (the first ${number(rows.length)} shown)` : "") + "."];
  if (body.not_significant) parts.push(`${number(body.not_significant)} not listed: below that.`);
  if (!body.complete) parts.push(`Partition(s) ${body.failed.join(", ")} did not answer: their counts are missing.`);
  byId("wl-summary", HTMLElement).textContent = parts.join(" ");
  offerFiles("keywords", params, rows.length);
}

/**
 * What the list can be compared with: nothing, the whole corpus, the texts the filter leaves out,
 * another corpus, a saved subcorpus.
 */
function fillReferences() {
  const select = byId("wl-reference", HTMLSelectElement);
  const was = select.value;
  const here = corpusInfo().name;
  const options = [new Option("nothing: frequencies", ""), new Option("the whole corpus", "whole"),
    new Option("the texts the filter leaves out", "rest"),
    ...CORPORA.filter((c) => c.name !== here).map((c) => new Option(`corpus ${c.title || c.name}`, `corpus:${c.name}`)),
    ...savedSubcorpora().filter((s) => CORPORA.some((c) => c.name === s.corpus))
      .map((s) => new Option(`subcorpus ${s.name} (${s.corpus})`, `subcorpus:${s.id}`))];
  select.replaceChildren(...options);
  select.value = options.some((o) => o.value === was) ? was : "";
  referenceChosen();
}

/** A reference makes keywords: of single tokens, with no regex, ranked by a measure. */
function referenceChosen() {
  const keywords = byId("wl-reference", HTMLSelectElement).value !== "";
  byId("wl-order-label", HTMLElement).hidden = !keywords;
  byId("kw-filter", HTMLElement).hidden = !keywords;
  byId("wl-n", HTMLSelectElement).disabled = keywords;
  byId("wl-match", HTMLInputElement).disabled = keywords;
  byId("wl-ignore-case", HTMLInputElement).disabled = keywords;
  byId("wl-min", HTMLInputElement).value = keywords && byId("wl-min", HTMLInputElement).value === "1" ? "5"
    : byId("wl-min", HTMLInputElement).value;
}

/** The attributes of the corpus chosen, with what each holds as its title. */
function fillAttributes() {
  const info = corpusInfo();
  const select = byId("wl-attribute", HTMLSelectElement);
  const keep = info.p_attributes.includes(select.value) ? select.value : info.p_attributes[0] || "";
  select.replaceChildren(...info.p_attributes.map((name) => {
    const option = new Option(name, name, false, name === keep);
    const about = info.attributes?.[name];
    if (about) option.title = about;
    return option;
  }));
  select.value = keep;
}

/** Wires the word list's controls: List (or Enter in a field) counts; a new corpus refills the attributes. */
export function setUpWordList() {
  fillAttributes();
  fillReferences();
  for (const id of Object.keys(LIST_SETTINGS)) listDefaults[id] = controlValue(id);
  byId("corpus", HTMLSelectElement).addEventListener("change", () => {
    fillAttributes();
    fillReferences();
  });
  byId("wl-reference", HTMLSelectElement).addEventListener("change", referenceChosen);
  document.addEventListener("cowbird:subcorpora", fillReferences);
  byId("wl-run", HTMLButtonElement).addEventListener("click", () => void listWords());
  for (const id of ["wl-min", "wl-match"]) {
    byId(id, HTMLInputElement).addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        void listWords();
      }
    });
  }
}
