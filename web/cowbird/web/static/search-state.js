// @ts-check
// The search page's state, its URL and every request parameter it sends.
//
// The page keeps the whole search, the page of hits or the random sample shown, the view and its
// settings in the URL, so that a results page can be bookmarked, shared, reloaded and reached with
// Back. This module is the one place where that URL is written and read (`pageUrl`, `fromUrl`) and
// the one place where the parameters of /api/v1/translate, /estimate, /query, /export, /frequency,
// /distribution and /collocations are built (`searchParams` and the `…Request` functions below).
//
// What the user edits (the query, the filters, the settings' controls) lives in the form and is
// read from it when needed; everything else that changes lives in the one object `state`, which the
// other modules read (typed read-only all the way down, so that tsc refuses a write) and change only
// through this module's setters ("writing the state" below).

import { DECLARED, DECLARED_SETTINGS, declaredOffset } from "./search-declared.js";
import { controlValue, corpusInfo, setControlValue } from "./search-dom.js";

/**
 * A declared analysis's view (search-declared.js: the name of its tab and of its route).
 * @typedef {string & {readonly declaredView: true}} DeclaredView
 */
/** @typedef {"kwic" | "frequency" | "distribution" | "trend" | "compare" | "collocations" | "dispersion" | DeclaredView} View */
/** @typedef {"frequency" | "distribution" | "trend" | "compare" | "collocations" | "dispersion"} Analysis */
/** @typedef {"target" | "keyword"} Anchor */
/** @typedef {"query" | "translate" | "estimate" | "analysis" | "download" | "wordlist" | "sketch" | "builder"} RequestKind */

/**
 * A metadata filter, as the API and the URL write it (`filterText`, `parseFilter`): `attribute~regex`
 * (matches the regex), `attribute=value` (equals the value exactly: no regex, `a.b` is only itself) or
 * `attribute:from..to` (a number from `from` to `to`, both included; an empty end is open), with `!~`
 * and `!=` when negated. Equals from code (a trend point's year, say): `equalsFilter("text_year", "2005")`
 * is the filter row "text_year equals 2005", the text `text_year=2005`.
 * @typedef {object} Filter
 * @property {string} attribute
 * @property {boolean} negated
 * @property {string} regex  the regex ("~"), the value ("=") or `from..to` (":")
 * @property {FilterOperator} [operator]  "~" when absent
 */
/** @typedef {"~" | "=" | ":"} FilterOperator  matches / equals / from–to */

/**
 * A search as the form states it (and as every request names it).
 * @typedef {object} Search
 * @property {string} corpus
 * @property {string} q
 * @property {"simple" | "cqp"} syntax
 * @property {boolean} ignore_case
 * @property {Filter[]} filters
 */

/** @typedef {{size: number, seed: number}} Sample  a random sample of `size` hits drawn with `seed` */
/** @typedef {{sort: string, direction: string}} Order  the sort of the concordance, as /query and /export take it */

/**
 * The search whose hits are shown.
 * @typedef {object} Shown
 * @property {Search} search
 * @property {number} offset  the first hit of the page shown (0 for a sample)
 * @property {Sample | null} sample  the random sample shown, or null for a page of hits
 * @property {number} total  the search's hits
 * @property {Order | null} order  the sort of the hits shown (null: corpus order, or a sample)
 * @property {string[]} inline  the attributes written after each token's word (word/pos/lemma)
 */

/** @typedef {import("./api-types").EstimateResult} Estimate  GET /api/v1/estimate's answer */

/** @typedef {Record<string, string>} Settings  control id -> its value ("1" or "" for a checkbox) */

/**
 * What a page's URL holds, read back (see `fromUrl`).
 * @typedef {object} Restored
 * @property {Search} search  its corpus as the URL names it, which may be none open to the viewer
 * @property {number} offset
 * @property {Sample | null} sample
 * @property {View} view
 * @property {Settings} settings  every setting, at its default where the URL does not say
 * @property {Record<Analysis, number>} tableOffset
 * @property {string} collOrder
 * @property {string | null} categories  the saved search whose lines are categorised
 */

/**
 * A value read-only all the way down: what the other modules see of the state. A request's
 * controller stays as it is (it can be aborted); the word list's parameters can only be read.
 * @template T
 * @typedef {T extends string ? T : T extends AbortController ? T : T extends URLSearchParams ? ReadonlyParams
 *   : T extends readonly (infer U)[] ? readonly DeepReadonly<U>[]
 *   : T extends object ? {readonly [K in keyof T]: DeepReadonly<T[K]>} : T} DeepReadonly
 */
/** @typedef {Pick<URLSearchParams, "get" | "getAll" | "has" | "toString" | "forEach" | "entries" | "keys" | "values" | typeof Symbol.iterator>} ReadonlyParams */

/**
 * The page's one mutable object. Everything else the scripts keep is a constant.
 * @typedef {object} State
 * @property {Shown | null} shown  the search whose hits are shown (null: none, or the last search failed)
 * @property {View} view  the view shown: the concordance or an analysis tab
 * @property {Record<Analysis, number>} tableOffset  the first row of each analysis table's page
 * @property {string} collOrder  the measure the collocations are ranked by
 * @property {Partial<Record<string, string>>} analysed  the request each analysis table last showed (not fetched again when a tab is revisited)
 * @property {Settings} defaults  each setting's control value when the page was built (not put in the URL)
 * @property {Record<RequestKind, AbortController | null>} requests  the request of each kind in flight (a new one aborts the last)
 * @property {Record<"translate" | "estimate" | "settle", number | undefined>} timers  the pending debounce of the CQP
 *   line, of the estimate line and of settings changed in quick succession
 * @property {{about: string, answer: Estimate} | null} estimate  the latest estimate that came, and the search it is
 *   about (its `searchParams`): a search the form starts asks first when its estimate says so
 * @property {string | null} categories  the saved search whose lines are being categorised (its id), if any
 * @property {URLSearchParams | null} listed  the word or keyword list shown, as the URL writes it: list=1, its
 *   settings changed from their defaults, the corpus and the filters
 * @property {URLSearchParams | null} sketched  the word sketch shown (or sketch difference, or similar words), as
 *   the URL writes it: sketch=the lemma, sketch_other, sketch_similar, its settings changed from their defaults,
 *   the corpus and the filters
 */

/** @type {State} */
const current = {
  shown: null,
  view: "kwic",
  tableOffset: { frequency: 0, distribution: 0, trend: 0, compare: 0, collocations: 0, dispersion: 0 },
  collOrder: "log_likelihood",
  analysed: {},
  defaults: {},
  requests: { query: null, translate: null, estimate: null, analysis: null, download: null, wordlist: null, sketch: null,
    builder: null },
  timers: { translate: undefined, estimate: undefined, settle: undefined },
  estimate: null,
  categories: null,
  listed: null,
  sketched: null,
};

/**
 * The page's state, to read: other modules change it only through the setters below.
 * @type {DeepReadonly<State>}
 */
export const state = current;

/** Hits on a page of the concordance (and in a random sample). */
export const PAGE = 100;
/** @type {readonly View[]} */
export const VIEWS = ["kwic", "frequency", "distribution", "trend", "compare", "collocations", "dispersion",
  ...DECLARED.map((d) => /** @type {DeclaredView} */ (d.name))];

/**
 * Whether a view is a declared analysis's.
 * @param {View} view
 * @returns {view is DeclaredView}
 */
export function isDeclared(view) {
  return DECLARED.some((d) => d.name === view);
}
/** @type {readonly Analysis[]} */
export const ANALYSES = ["frequency", "distribution", "trend", "compare", "collocations", "dispersion"];
/** Rows of a page of each analysis table (a chart draws the page: at most 30 bars). */
export const ROWS = /** @type {const} */ ({ frequency: 100, distribution: 30, trend: 0, compare: 100, collocations: 100,
  dispersion: 50 });
/** The prefix of each analysis's element ids (#freq-table, #dist-pager, ...). */
export const PREFIX = /** @type {const} */ ({ frequency: "freq", distribution: "dist", trend: "trend", compare: "cmp",
  collocations: "coll", dispersion: "disp" });
export const DEFAULT_COLL_ORDER = "log_likelihood";
/** The URL parameter of each analysis table's page. */
const OFFSETS = /** @type {const} */ ({ frequency: "freq_offset", distribution: "dist_offset", trend: "trend_offset",
  compare: "cmp_offset", collocations: "coll_offset", dispersion: "disp_offset" });
/** The controls whose values live in the URL (under these names) when not at their default. */
export const SETTINGS = /** @type {const} */ ({
  "sort-on": "sort_on", "sort-attribute": "sort_attribute", "sort-direction": "direction", "sort-fold": "sort_fold",
  "sort-on-2": "sort_on_2", "sort-attribute-2": "sort_attribute_2", "sort-direction-2": "direction_2",
  "sort-fold-2": "sort_fold_2",
  "sort-on-3": "sort_on_3", "sort-attribute-3": "sort_attribute_3", "sort-direction-3": "direction_3",
  "sort-fold-3": "sort_fold_3",
  "kwic-inline": "inline", "kwic-meta": "column",
  "freq-by": "freq_by", "freq-on": "freq_on", "freq-by-2": "freq_by_2", "freq-on-2": "freq_on_2", "freq-fold-c": "freq_fold_c", "freq-fold-d": "freq_fold_d",
  "dist-by": "dist_by", "dist-order": "dist_order",
  "trend-by": "trend_by", "trend-period": "trend_period", "trend-q-2": "trend_q_2", "trend-q-3": "trend_q_3",
  "trend-q-4": "trend_q_4",
  "cmp-q": "cmp_q", "cmp-corpus": "cmp_corpus", "cmp-filter": "cmp_filter", "cmp-by": "cmp_by", "cmp-on": "cmp_on",
  "cmp-p": "cmp_p",
  "disp-parts": "disp_parts",
  "coll-attribute": "coll_attribute", "coll-window": "coll_window", "coll-within": "coll_within", "coll-min": "coll_min",
  ...DECLARED_SETTINGS,
});

// ---------------------------------------------------------------- the settings' controls

/** @returns {Settings} every setting as its control has it now */
export function readSettings() {
  return Object.fromEntries(Object.keys(SETTINGS).map((id) => [id, controlValue(id)]));
}

/** @param {Settings} settings */
export function applySettings(settings) {
  for (const [id, text] of Object.entries(settings)) setControlValue(id, text);
}

/** Remembers the settings as the page was built: a setting at its default stays out of the URL. */
export function rememberDefaults() {
  current.defaults = readSettings();
}

// ---------------------------------------------------------------- writing the state

/**
 * The search whose hits are shown (null: none).
 * @param {Shown | null} shown
 */
export function setShown(shown) {
  current.shown = shown;
}

/** @param {View} view  the view shown */
export function setView(view) {
  current.view = view;
}

/**
 * The first row of an analysis table's page.
 * @param {Analysis} view
 * @param {number} offset
 */
export function setTableOffset(view, offset) {
  current.tableOffset[view] = offset;
}

/** @param {Record<Analysis, number>} offsets  the first row of each analysis table's page (from the URL) */
export function setTableOffsets(offsets) {
  current.tableOffset = offsets;
}

/** @param {string} order  the measure the collocations are ranked by */
export function setCollOrder(order) {
  current.collOrder = order;
}

/**
 * The request an analysis table now shows.
 * @param {Analysis | DeclaredView} view
 * @param {string} request
 */
export function setAnalysed(view, request) {
  current.analysed[view] = request;
}

/** No analysis table shows the search shown any more: each is fetched again when its tab is. */
export function forgetAnalysed() {
  current.analysed = {};
}

/**
 * The request of this kind in flight (null: none).
 * @param {RequestKind} kind
 * @param {AbortController | null} controller
 */
export function setRequest(kind, controller) {
  current.requests[kind] = controller;
}

/**
 * A pending debounce (its `setTimeout` id).
 * @param {keyof State["timers"]} timer
 * @param {number | undefined} id
 */
export function setTimer(timer, id) {
  current.timers[timer] = id;
}

/**
 * The latest estimate that came, and the search it is about (its `searchParams`).
 * @param {string} about
 * @param {Estimate} answer
 */
export function setEstimate(about, answer) {
  current.estimate = { about, answer };
}

/** @param {string | null} id  the saved search whose lines are being categorised (null: none) */
export function setCategories(id) {
  current.categories = id;
}

/** @param {URLSearchParams | null} listed  the word or keyword list shown, as the URL writes it */
export function setListed(listed) {
  current.listed = listed;
}

/** @param {URLSearchParams | null} sketched  the word sketch shown, as the URL writes it */
export function setSketched(sketched) {
  current.sketched = sketched;
}

// ---------------------------------------------------------------- the URL

/**
 * The page's URL: the search shown (or `shown`, as it would be once shown), its page or sample,
 * the view shown and every setting changed from its default.
 * @param {Settings} [settings]
 * @param {DeepReadonly<Shown> | null} [shown]
 * @returns {string}
 */
export function pageUrl(settings = readSettings(), shown = state.shown) {
  const url = shown ? searchParams(shown.search) : new URLSearchParams();

  if (shown?.sample) {
    url.set("sample", String(shown.sample.size));
    url.set("seed", String(shown.sample.seed));
  } else if (shown?.offset) url.set("offset", String(shown.offset));
  for (const view of ANALYSES) if (state.tableOffset[view]) url.set(OFFSETS[view], String(state.tableOffset[view]));
  for (const { name } of DECLARED) if (declaredOffset(name)) url.set(`${name}_offset`, String(declaredOffset(name)));
  if (state.view !== "kwic") url.set("view", state.view);
  for (const [id, name] of Object.entries(SETTINGS)) {
    if (settings[id] !== state.defaults[id]) url.set(name, settings[id]);
  }
  if (state.collOrder !== DEFAULT_COLL_ORDER) url.set("coll_order", state.collOrder);
  if (state.categories) url.set("categories", state.categories);
  // the word list shown: its settings (and, with no search shown, the corpus and filters it counted in)
  for (const [name, value] of state.listed ?? []) {
    if (!(shown && (name === "corpus" || name === "filter"))) url.append(name, value);
  }
  // the word sketch shown: its lemma(s) and settings (and the corpus and filters, when nothing above named them)
  const named = url.has("corpus");
  for (const [name, value] of state.sketched ?? []) {
    if (!(named && (name === "corpus" || name === "filter"))) url.append(name, value);
  }
  return `/?${url}`;
}

/**
 * A filter as the API and the URL write it: `attribute~regex`, `attribute=value`, `attribute:from..to`,
 * `attribute!~regex`, `attribute!=value` (null if not one).
 * @param {string} text
 * @returns {Filter | null}
 */
export function parseFilter(text) {
  const match = /^([A-Za-z_][A-Za-z0-9_-]*)(!~|~|!=|=|:)(.*)$/s.exec(text);
  if (!match) return null;
  const operator = /** @type {FilterOperator} */ (match[2].replace("!", ""));
  return { attribute: match[1], negated: match[2].startsWith("!"), regex: match[3], operator };
}

/**
 * A filter as the API and the URL write it (the inverse of `parseFilter`).
 * @param {Filter} f
 * @returns {string}
 */
export function filterText(f) {
  return `${f.attribute}${f.negated ? "!" : ""}${f.operator ?? "~"}${f.regex}`;
}

/**
 * The filter choosing the texts whose `attribute` equals `value` exactly (`text_year=2005`).
 * @param {string} attribute
 * @param {string} value
 * @returns {Filter}
 */
export function equalsFilter(attribute, value) {
  return { attribute, negated: false, regex: value, operator: "=" };
}

/**
 * What a page's URL holds.
 * @param {URLSearchParams} params
 * @returns {Restored}
 */
export function fromUrl(params) {
  /** @type {Filter[]} */
  const filters = [];
  for (const text of params.getAll("filter")) {
    const filter = parseFilter(text);
    if (filter) filters.push(filter);
  }
  const seed = params.get("seed");
  const sample = params.has("sample") && seed !== null && /^\d+$/.test(seed)
    ? { size: Math.min(PAGE, Math.max(1, whole(params.get("sample")))), seed: Number(seed) } : null;
  const view = VIEWS.find((v) => v === params.get("view")) || "kwic";
  /** @type {Settings} */
  const settings = {};
  for (const [id, name] of Object.entries(SETTINGS)) settings[id] = params.get(name) ?? state.defaults[id];
  return {
    search: {
      corpus: params.get("corpus") ?? "",
      q: params.get("q") || "",
      syntax: params.get("syntax") === "cqp" ? "cqp" : "simple",
      ignore_case: params.get("ignore_case") === "1",
      filters,
    },
    offset: whole(params.get("offset")),
    sample,
    view,
    settings,
    tableOffset: { frequency: whole(params.get(OFFSETS.frequency)), distribution: whole(params.get(OFFSETS.distribution)),
      trend: 0, compare: 0, collocations: whole(params.get(OFFSETS.collocations)), dispersion: 0 },
    collOrder: params.get("coll_order") || DEFAULT_COLL_ORDER,
    categories: params.get("categories"),
  };
}

/**
 * A non-negative integer from the URL (0 for anything else).
 * @param {string | null} text
 */
function whole(text) {
  const n = Number.parseInt(text ?? "", 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

// ---------------------------------------------------------------- the requests

/**
 * The search, as every request names it (and as /api/v1/translate takes it).
 * @param {DeepReadonly<Search>} search
 * @returns {URLSearchParams}
 */
export function searchParams(search) {
  const params = new URLSearchParams({ corpus: search.corpus, q: search.q, syntax: search.syntax });
  if (search.ignore_case) params.set("ignore_case", "1");
  for (const f of search.filters) params.append("filter", filterText(f));
  return params;
}

/**
 * Whether two searches are the same search.
 * @param {DeepReadonly<Search>} a
 * @param {DeepReadonly<Search>} b
 */
export function sameSearch(a, b) {
  return searchParams(a).toString() === searchParams(b).toString();
}

/**
 * The sort the settings ask for (null: corpus order).
 * @param {Settings} settings
 * @returns {Order | null}
 */
export function sortOrder(settings) {
  const on = settings["sort-on"];
  if (!on) return null;
  if (on === "random") return { sort: "random", direction: "asc" };
  if (on === "gdex") return { sort: "gdex", direction: "asc" }; // good examples first: the best first
  /** @type {string[]} */
  const keys = [];
  /** @type {string[]} */
  const directions = [];
  for (const level of SORT_LEVELS) { // the first key, then those that order its ties, while they are set
    const at = settings[`sort-on${level}`];
    if (!at) break;
    keys.push(`${at}.${settings[`sort-attribute${level}`]}${settings[`sort-fold${level}`] ? "%c" : ""}`);
    directions.push(String(settings[`sort-direction${level}`]));
  }
  return { sort: keys.join(","), direction: directions.every((d) => d === directions[0]) ? directions[0] : directions.join(",") };
}

/** The context of a GDEX-sorted line, in the page and in its downloads: the sentence its score is of
 * (the default [corpora.gdex] region). */
export const GDEX_CONTEXT = "s";

/** The id suffixes of the sort's keys: the first key, then the second and third ("then by"). */
export const SORT_LEVELS = ["", "-2", "-3"];

/**
 * Which hits: a random sample, or all of them in an order (the same for /query and /export).
 * @param {URLSearchParams} params
 * @param {Sample | null} sample
 * @param {Order | null} order
 */
export function selectHits(params, sample, order) {
  if (sample) {
    params.set("sample", String(sample.size));
    params.set("seed", String(sample.seed));
  } else if (order) {
    params.set("sort", order.sort);
    params.set("direction", order.direction);
    if (order.sort === "random") params.set("seed", "1");
  }
}

/**
 * The attributes the settings write after each token's word ("Tokens as": word/pos/lemma).
 * @param {Settings} settings
 * @returns {string[]}
 */
export function inlineOf(settings) {
  const value = settings["kwic-inline"];
  return typeof value === "string" && value ? value.split(",") : [];
}

/**
 * /api/v1/query: a page of hits from `offset`, or a random `sample`, with the `show` attributes of
 * each match and the `inline` attributes written after each token's word.
 * @param {Search} search
 * @param {{offset: number, sample: Sample | null, order: Order | null, show: string[], inline: string[], meta?: string[], boundaries?: string[]}} what
 * @returns {URLSearchParams}
 */
export function queryRequest(search, { offset, sample, order, show, inline, meta = [], boundaries = [] }) {
  const params = searchParams(search);
  if (show.length) params.set("show", show.join(","));
  if (inline.length) params.set("inline", inline.join(","));
  if (meta.length) params.set("meta", meta.join(","));
  if (boundaries.length) params.set("boundaries", boundaries.join(","));
  selectHits(params, sample, sample ? null : order);
  // a line is the sentence scored (a corpus without s: its [corpora.gdex] region is another, and so is the context)
  if (!sample && order?.sort === "gdex" && corpusInfo().s_attributes.includes(GDEX_CONTEXT)) params.set("context", GDEX_CONTEXT);
  if (!sample) {
    params.set("offset", String(offset));
    params.set("limit", String(PAGE));
  }
  return params;
}

/**
 * An analysis of a search: one page of its table from `offset`, or (`"file"`) its whole table as
 * a TSV file with its provenance.
 * @param {DeepReadonly<Search>} search
 * @param {Analysis} view
 * @param {Settings} settings
 * @param {{offset: number} | "file"} what
 * @returns {URLSearchParams}
 */
export function analysisRequest(search, view, settings, what) {
  const params = searchParams(search);
  if (view === "frequency") {
    const second = settings["freq-by-2"]; // a breakdown by a second key at once (its own span)
    params.set("by", second ? `${settings["freq-by"]},${second}` : String(settings["freq-by"]));
    if (second) params.set("on", `${settings["freq-on"] || "match..matchend"},${settings["freq-on-2"] || "match..matchend"}`);
    else if (settings["freq-on"]) params.set("on", settings["freq-on"]);
    const fold = `${settings["freq-fold-c"] ? "c" : ""}${settings["freq-fold-d"] ? "d" : ""}`;
    if (fold) params.set("fold", fold);
  } else if (view === "distribution") {
    params.set("by", settings["dist-by"]);
    params.set("order", settings["dist-order"]);
  } else if (view === "trend") { // not a paged table: every period of every query
    params.set("by", settings["trend-by"]);
    params.set("period", settings["trend-period"] || "year");
    for (const id of ["trend-q-2", "trend-q-3", "trend-q-4"]) {
      const more = String(settings[id] ?? "").trim();
      if (more) params.append("q", more);
    }
  } else if (view === "compare") { // not paged: each side's preferred values, at most ROWS.compare a side
    const other = String(settings["cmp-q"] ?? "").trim();
    if (other) params.set("other_q", other);
    if (settings["cmp-corpus"]) params.set("other_corpus", settings["cmp-corpus"]);
    const texts = String(settings["cmp-filter"] ?? "").trim();
    if (texts) params.set("other_filter", texts);
    params.set("by", settings["cmp-by"]);
    if (settings["cmp-on"]) params.set("on", settings["cmp-on"]);
    params.set("p", settings["cmp-p"] || "0.05");
    params.set("limit", String(ROWS.compare));
  } else if (view === "dispersion") { // not a paged table: the measures and ROWS.dispersion stretches
    params.set("parts", String(settings["disp-parts"] || "text"));
    params.set("bins", String(ROWS.dispersion));
  } else {
    params.set("attribute", settings["coll-attribute"]);
    params.set("window", settings["coll-window"] || "5");
    params.set("within", settings["coll-within"]);
    params.set("min_freq", settings["coll-min"] || "1");
    params.set("order", state.collOrder);
  }
  if (what === "file") {
    params.set("format", "tsv");
    params.set("provenance", "1");
  } else if (view !== "dispersion" && view !== "trend" && view !== "compare") {
    params.set("offset", String(what.offset));
    params.set("limit", String(ROWS[view]));
  }
  return params;
}

/**
 * The page's URL made the state's (`pageUrl`) unless it is already: a new entry of the history
 * (`push`: a new search, list or sketch the user asked for, which Back leaves) or this entry's.
 * @param {boolean} push
 */
export function showInUrl(push) {
  const url = pageUrl();
  if (url === `${location.pathname}${location.search}`) return;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}

/**
 * What the download dialog asks for.
 * @typedef {object} ExportChoices
 * @property {string[]} show  token attributes of the match
 * @property {string[]} meta  metadata of the hit
 * @property {string} context  tokens each side, or a region's name
 * @property {string} format  tsv, csv or xlsx
 * @property {boolean} provenance  a metadata block first
 * @property {number | null} limit  hits (null for a sample: its size)
 */

/**
 * /api/v1/export: the search shown as it is shown (its sample, or its order), with the dialog's choices.
 * @param {DeepReadonly<Shown>} shown
 * @param {ExportChoices} choices
 * @returns {URLSearchParams}
 */
export function exportRequest(shown, choices) {
  const params = searchParams(shown.search);
  selectHits(params, shown.sample, shown.order);
  if (choices.show.length) params.set("show", choices.show.join(","));
  if (choices.meta.length) params.set("meta", choices.meta.join(","));
  if (shown.inline.length) params.set("inline", shown.inline.join(","));
  params.set("context", choices.context);
  params.set("format", choices.format);
  if (choices.provenance) params.set("provenance", "1");
  if (!shown.sample && choices.limit !== null) params.set("limit", String(choices.limit));
  return params;
}
