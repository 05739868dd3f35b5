// @ts-check
// The views of the hits: the tabs, and the analyses next to the concordance — Frequency,
// Distribution (with its chart) and Collocations — a page of rows at a time, each row a link to its
// hits (rows cloned from the page's <template>s), each table downloadable whole. An analysis is
// asked for as a stream (stream=1): until its table comes, its summary says how many partitions
// have answered and which failed.

import { ApiProblem, aborted, apiUrl, begin, busy, end, getLines, problemText } from "./search-api.js";
import { SERIES_STYLES, barChart, drawTrend, stripChart } from "./search-chart.js";
import { byId, corpusInfo, decimal, fromTemplate, number, part, setControlValue } from "./search-dom.js";
import { declared, declaredOffset, declaredRequest, showDeclared } from "./search-declared.js";
import {
  PREFIX, ROWS, VIEWS, analysisRequest, isDeclared, pageUrl, readSettings, searchParams, setAnalysed, setCollOrder,
  setTableOffset, setView, state,
} from "./search-state.js";

/** @typedef {import("./search-state.js").View} View */
/** @typedef {import("./search-state.js").Analysis} Analysis */
/** @typedef {import("./search-state.js").DeclaredView} DeclaredView */

/**
 * What every paged analysis (all but the dispersion, trend and comparison) answers besides its rows:
 * the search's hits, whether every partition answered, and where the page lies in the table.
 * @typedef {Pick<import("./api-types").FrequencyResult, "total" | "complete" | "failed" | "offset" | "rows_total">}
 *   AnalysisPage
 */

// Each analysis's answer (GET /api/v1/frequency, distribution, dispersion, trend, compare, collocations)
/** @typedef {import("./api-types").FrequencyResult} FrequencyResult */
/** @typedef {import("./api-types").DispersionResult} DispersionResult */
/** @typedef {import("./api-types").DistributionResult} DistributionResult */
/** @typedef {import("./api-types").TrendResult} TrendResult */
/** @typedef {import("./api-types").ComparedSearch} ComparedSearch */
/** @typedef {import("./api-types").CompareNext} CompareNext */
/** @typedef {import("./api-types").CompareResult} CompareResult */
/** @typedef {import("./api-types").CollocationResult} CollocationResult */

/**
 * /api/v1/frequency|distribution|collocations?stream=1's events, one a line: `started`, a
 * `partition` event as each partition answers (or fails), then the `result` — the answer the plain
 * request gives — or an `error` (a problem after the stream had started).
 * @template T  the plain answer
 * @typedef {AnalysisStarted | AnalysisPartition | (T & {event: "result"}) | import("./search-kwic.js").ErrorEvent} AnalysisEvent
 */

/** @typedef {import("./api-types").AnalysisStarted} AnalysisStarted  (cowbird/frontend/events.py) */
/** @typedef {import("./api-types").AnalysisPartition} AnalysisPartition  a partition has answered (or failed) */

// ---------------------------------------------------------------- the collocation measures' names

/**
 * The names the page shows for the association measures: from the server (the JSON island
 * `<script id="measure-names">`, query_lang/cowbird/core/analysis_merge.py's MEASURE_NAMES); which measures
 * there are, and which one ranks the table, the server says with each answer (`measures`,
 * `order`). A measure without a name is shown by its key.
 * @type {Readonly<Record<string, string>>}
 */
const MEASURE_NAMES = measureNames();

/** @returns {Record<string, string>} */
function measureNames() {
  const island = document.getElementById("measure-names");
  return { f: "Co-occurrences", ...(island?.textContent ? JSON.parse(island.textContent) : {}) };
}

/** @param {string} measure */
const measureName = (measure) => MEASURE_NAMES[measure] ?? measure;

// ---------------------------------------------------------------- the tabs

/**
 * Shows a view (its tab selected; focused unless `focus` is false).
 * @param {View} view
 * @param {boolean} [focus]
 */
export function selectView(view, focus = true) {
  setView(view);
  for (const name of VIEWS) {
    const tab = byId(`tab-${name}`, HTMLElement);
    const chosen = name === view;
    tab.setAttribute("aria-selected", String(chosen));
    tab.tabIndex = chosen ? 0 : -1;
    if (chosen && focus) tab.focus();
  }
  showPanels();
}

/** The panel of the chosen view, when there are hits to view (no analysis panels without hits). */
export function showPanels() {
  const hits = state.shown !== null && state.shown.total > 0;
  for (const name of VIEWS) byId(`panel-${name}`, HTMLElement).hidden = name !== state.view || (name !== "kwic" && !hits);
}

// ---------------------------------------------------------------- an analysis

/** Counts the hits shown for the analysis shown, unless its table already shows that page. */
export async function analyse() {
  const view = state.view;
  const shown = state.shown;
  if (view === "kwic" || !shown || shown.total === 0) return;
  if (isDeclared(view)) {
    await analyseDeclared(view, searchParams(shown.search));
    return;
  }
  const settings = readSettings();
  let params = analysisRequest(shown.search, view, settings, { offset: state.tableOffset[view] });
  if (state.analysed[view] === params.toString()) return;
  const prefix = PREFIX[view];
  const summary = byId(`${prefix}-summary`, HTMLElement);
  const signal = begin("analysis");
  summary.textContent = "Counting…";
  byId("results", HTMLElement).setAttribute("aria-busy", "true");
  try {
    if (view === "frequency") {
      /** @type {FrequencyResult} */
      let body = await counted(view, params, signal, summary);
      const same = body.distinct === 1 && body.rows.length === 1 ? body.rows[0].value : null;
      const now = readSettings(); // the controls as they are now, not as they were when the count began
      const untouched = ["freq-by", "freq-on", "freq-by-2"].every(
        (id) => settings[id] === state.defaults[id] && now[id] === state.defaults[id]);
      if (same !== null && untouched && state.tableOffset.frequency === 0) {
        // every hit has the same word: a one-row table says nothing; the word after the match varies
        setControlValue("freq-on", "matchend[1]");
        params = analysisRequest(shown.search, view, readSettings(), { offset: 0 });
        body = await counted(view, params, signal, summary);
        showFrequency(body);
        summary.textContent = `Every hit is “${same}”: counting the ${body.by} after it instead. ${summary.textContent}`;
        if (state.shown) history.replaceState(null, "", pageUrl());
      } else {
        showFrequency(body);
      }
      finish(view, body);
    } else if (view === "distribution") await countAndShow(view, params, signal, summary, showDistribution);
    else if (view === "trend") await countAndShow(view, params, signal, summary, showTrend);
    else if (view === "compare") await countAndShow(view, params, signal, summary, showCompare);
    else if (view === "dispersion") await countAndShow(view, params, signal, summary, showDispersion);
    else await countAndShow(view, params, signal, summary, showCollocations);
    offerFiles(view, prefix, analysisRequest(shown.search, view, settings, "file"));
    setAnalysed(view, params.toString());
    document.body.dataset.analysed = view;
  } catch (error) {
    const figure = view === "distribution" || view === "dispersion" || view === "trend" ? [`${prefix}-figure`] : [];
    failed(error, view, prefix, summary, signal, figure);
  } finally {
    end("analysis", signal);
    // still busy when a newer analysis (or a search) took this one's place
    byId("results", HTMLElement).setAttribute("aria-busy", String(busy("analysis") || busy("query")));
  }
}

/**
 * The links that download an analysis's whole table, every row: as TSV, and the same as a spreadsheet.
 * @param {string} path  its route (/api/v1/PATH)
 * @param {string} prefix  its elements' ids' prefix
 * @param {URLSearchParams} file  the request of its TSV file
 */
function offerFiles(path, prefix, file) {
  for (const [id, format] of [[`${prefix}-download`, "tsv"], [`${prefix}-xlsx`, "xlsx"]]) {
    file.set("format", format);
    const link = byId(id, HTMLAnchorElement);
    link.href = `${apiUrl(path)}?${file}`;
    link.setAttribute("download", "");
    link.hidden = false;
  }
}

/**
 * An analysis that did not answer: its problem said in its summary (its table, files, pager and figure
 * hidden), or "Cancelled." unless a newer request of the same tab took its place.
 * @param {unknown} error
 * @param {View} view
 * @param {string} prefix  its elements' ids' prefix
 * @param {HTMLElement} summary
 * @param {AbortSignal} signal  its request's
 * @param {string[]} [more]  more of its elements to hide (a figure)
 */
function failed(error, view, prefix, summary, signal, more = []) {
  if (error instanceof ApiProblem) {
    summary.textContent = problemText(error.problem, "the analysis failed");
    for (const id of [`${prefix}-table`, `${prefix}-download`, `${prefix}-xlsx`, `${prefix}-pager`, ...more]) {
      byId(id, HTMLElement).hidden = true;
    }
  } else if (aborted(error)) {
    const overtaken = state.requests.analysis?.signal !== signal;
    if (!overtaken || state.view !== view) summary.textContent = "Cancelled."; // else its successor counts
  } else {
    summary.textContent = `The analysis failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * A declared analysis (search-declared.js) of the hits shown, unless its table already shows that page:
 * streamed as every analysis, its page shown by its page module, its whole table downloadable.
 * @param {DeclaredView} name
 * @param {URLSearchParams} search  the search's parameters
 */
async function analyseDeclared(name, search) {
  const view = declared(name);
  if (!view) return;
  const settings = readSettings();
  const params = declaredRequest(view, search, settings, { offset: declaredOffset(name) });
  if (state.analysed[name] === params.toString()) return;
  const summary = byId(`${name}-summary`, HTMLElement);
  const signal = begin("analysis");
  summary.textContent = "Counting…";
  byId("results", HTMLElement).setAttribute("aria-busy", "true");
  try {
    /** @type {import("./search-declared.js").DeclaredAnswer} */
    const body = await counted(name, params, signal, summary);
    await showDeclared(view, body, search);
    if (!body.complete) {
      summary.textContent += ` Incomplete: partition(s) ${body.failed.join(", ")} did not answer; their hits are not counted.`;
    }
    offerFiles(name, name, declaredRequest(view, search, settings, "file"));
    setAnalysed(name, params.toString());
    document.body.dataset.analysed = name;
  } catch (error) {
    failed(error, name, name, summary, signal);
  } finally {
    end("analysis", signal);
    byId("results", HTMLElement).setAttribute("aria-busy", String(busy("analysis") || busy("query")));
  }
}

/**
 * An analysis's answer (`counted`) shown by `show`, with its pager and what did not answer.
 * @template {DispersionResult | TrendResult | CompareResult | AnalysisPage & {rows: unknown[]}} T
 * @param {Analysis} view
 * @param {URLSearchParams} params
 * @param {AbortSignal} signal
 * @param {HTMLElement} summary
 * @param {(body: T) => void} show
 */
async function countAndShow(view, params, signal, summary, show) {
  /** @type {T} */
  const body = await counted(view, params, signal, summary);
  show(body);
  finish(view, body);
}

/**
 * An analysis's answer, asked for as a stream (stream=1): until its result, `summary` says how
 * many of the corpus's partitions have answered and names those that failed. An `error` event
 * throws its ApiProblem, as a refusal before the stream does; an abort (`signal`) an AbortError.
 * @template {{complete: boolean, failed: string[]}} T  the plain answer
 * @param {Analysis | DeclaredView} view
 * @param {URLSearchParams} params  the plain request's
 * @param {AbortSignal} signal
 * @param {HTMLElement} summary
 * @returns {Promise<T>}
 */
async function counted(view, params, signal, summary) {
  const streamed = new URLSearchParams(params);
  if (view !== "trend" && view !== "compare") streamed.set("stream", "1"); // these answer at once, for every search
  /** @type {T | null} */
  let body = null;
  /** @type {AsyncGenerator<AnalysisEvent<T> | T, void, undefined>} */
  const answers = getLines(view, streamed, signal);
  for await (const step of answers) {
    if (!("event" in step) || step.event === "result") { // (a plain answer has no events); the last event
      body = step;
      continue;
    }
    if (step.event === "error") throw new ApiProblem(step);
    if (step.event === "started") summary.textContent = countingText(0, step.partitions, []);
    else summary.textContent = countingText(step.done, step.partitions, step.failed);
  }
  if (body === null) throw new Error("the answer ended before its result");
  // changed or cancelled as the answer ended: as an abort during it (a newer request owns the table)
  signal.throwIfAborted();
  return body;
}

/**
 * A running analysis, never taken for its answer: "Counting… 2 of 3 partitions answered (p2 failed)".
 * @param {number} done  partitions answered or failed
 * @param {number} partitions
 * @param {string[]} failed
 */
function countingText(done, partitions, failed) {
  const answered = `${number(done)} of ${number(partitions)} partition${partitions === 1 ? "" : "s"} answered`;
  return `Counting… ${answered}${failed.length ? ` (${failed.join(", ")} failed)` : ""}`;
}

/**
 * The pager and the partitions that did not answer, for any analysis's page.
 * @param {Analysis} view
 * @param {DispersionResult | TrendResult | CompareResult | AnalysisPage & {rows: unknown[]}} body
 */
function finish(view, body) {
  if ("rows_total" in body) showPager(view, body); // the paged tables (not the dispersion, trend and comparison)
  if (!body.complete) {
    byId(`${PREFIX[view]}-summary`, HTMLElement).textContent +=
      ` Incomplete: partition(s) ${body.failed.join(", ")} did not answer; their hits are not counted.`;
  }
}

/**
 * "rows 31–60 of 219,266" with ← Previous / Next →: every row of a large table is a page away.
 * @param {Analysis} view
 * @param {AnalysisPage & {rows: unknown[]}} body
 */
function showPager(view, body) {
  const pager = byId(`${PREFIX[view]}-pager`, HTMLElement);
  const first = body.offset + 1;
  const last = body.offset + body.rows.length;
  pager.hidden = body.rows_total <= ROWS[view] && body.offset === 0;
  part(pager, ".range", HTMLElement).textContent = body.rows.length
    ? `rows ${number(first)}–${number(last)} of ${number(body.rows_total)}` : `no rows from ${number(first)} on (${number(body.rows_total)} in all)`;
  part(pager, ".prev", HTMLButtonElement).disabled = body.offset === 0;
  part(pager, ".next", HTMLButtonElement).disabled = last >= body.rows_total;
}

/**
 * The previous (-1) or next (1) page of an analysis table.
 * @param {Analysis} view
 * @param {number} step
 */
export function turnPage(view, step) {
  setTableOffset(view, Math.max(0, state.tableOffset[view] + step * ROWS[view]));
  if (state.shown) history.replaceState(null, "", pageUrl());
  analyse();
}

// ---------------------------------------------------------------- the tables

/**
 * A row's value: a link to its hits where there is one.
 * @param {HTMLTableRowElement} row
 * @param {string} text
 * @param {string | null} href
 * @param {string} label  the link's title
 */
export function fillValue(row, text, href, label) {
  const cell = part(row, "td.value", HTMLTableCellElement);
  if (href) {
    const link = document.createElement("a");
    link.href = href;
    link.textContent = text === "" ? "(empty)" : text;
    link.title = label;
    cell.replaceChildren(link);
  } else cell.textContent = text;
}

/**
 * The row's cells after its value, filled in order.
 * @param {HTMLTableRowElement} row
 * @param {string[]} texts
 */
export function fillNumbers(row, texts) {
  const cells = row.querySelectorAll("td:not(.value):not(.rank):not(.query):not(.side)");
  texts.forEach((text, i) => {
    cells[i].textContent = text;
  });
}

/**
 * @param {string} id  the table's
 * @param {HTMLTableRowElement[]} rows
 */
export function showRows(id, rows) {
  part(document, `#${id} tbody`, HTMLTableSectionElement).replaceChildren(...rows);
  byId(id, HTMLTableElement).hidden = rows.length === 0;
}

/** @param {FrequencyResult} body */
function showFrequency(body) {
  const on = byId("freq-on", HTMLSelectElement).selectedOptions[0]?.textContent ?? "";
  const counted = body.keys.length > 1 ? body.keys.join(" and ") : `${body.by} of ${on}`;
  byId("freq-summary", HTMLElement).textContent = `${counted}: ${number(body.distinct)} distinct values over ${number(body.counted)} hits` +
    (body.unset ? `; ${number(body.unset)} hits have no such token` : "") +
    (body.truncated ? "; too many distinct values: the list is cut" : "") + ".";
  showRows("freq-table", body.rows.map((r, i) => {
    const row = fromTemplate("freq-row", HTMLTableRowElement);
    part(row, "td.rank", HTMLTableCellElement).textContent = number(body.offset + i + 1);
    fillValue(row, r.value, r.concordance, `Show the ${number(r.frequency)} hits with ${body.by} ${r.value}`);
    fillNumbers(row, [number(r.frequency), `${decimal(100 * r.share)} %`, decimal(r.per_million)]);
    return row;
  }));
  const names = Object.keys(body.rows[0]?.corpora ?? {}); // several corpora: a column each, its count and rate
  corpusColumns("freq-table", names, body.rows.map((r) => names.map((n) => {
    const rate = r.corpora_per_million?.[n];
    return `${number(r.corpora?.[n] ?? 0)}${rate === undefined ? "" : ` (${decimal(rate)} per million)`}`;
  })));
}

/**
 * A column per corpus after a table's own (several corpora searched; none: the columns go).
 * @param {string} id  the table's
 * @param {string[]} names  the corpora
 * @param {string[][]} cells  per row, a cell per corpus
 */
function corpusColumns(id, names, cells) {
  const head = part(document, `#${id} thead tr`, HTMLTableRowElement);
  for (const old of head.querySelectorAll("th.per-corpus")) old.remove();
  for (const name of names) {
    const header = columnHead(name);
    header.classList.add("per-corpus");
    head.append(header);
  }
  document.querySelectorAll(`#${id} tbody tr`).forEach((row, i) => {
    if (!(row instanceof HTMLTableRowElement)) return;
    for (const text of cells[i] ?? []) {
      const cell = row.insertCell();
      cell.className = "per-corpus";
      cell.textContent = text;
    }
  });
}

/** @param {DistributionResult} body */
function showDistribution(body) {
  const hits = body.total - body.outside;
  byId("dist-summary", HTMLElement).textContent = `${number(hits)} hits over ${number(body.rows_total)} values of ${body.by}` +
    (body.outside ? `; ${number(body.outside)} hits lie outside any ${body.by} region` : "") +
    (body.rows_total > body.rows.length ? `; chart and table show ${body.rows.length} values a page, the download all` : "") + ".";
  const { chart, bars } = barChart(body.rows, body.by);
  byId("dist-chart", HTMLElement).replaceChildren(chart);
  byId("dist-figure", HTMLElement).hidden = bars === 0;
  showRows("dist-table", body.rows.map((r) => {
    const row = fromTemplate("dist-row", HTMLTableRowElement);
    fillValue(row, r.value, r.concordance, `Show the ${number(r.hits)} hits in ${body.by} ${r.value}`);
    fillNumbers(row, [number(r.hits), number(r.tokens), decimal(r.per_million), number(r.regions), number(r.regions_with_hits)]);
    return row;
  }));
  const names = Object.keys(body.rows[0]?.corpora ?? {}); // several corpora: each one's hits and rate
  corpusColumns("dist-table", names, body.rows.map((r) => names.map((n) => {
    const share = r.corpora?.[n];
    return share ? `${number(share.hits)} (${decimal(share.per_million)} per million)` : "";
  })));
}

/**
 * Where the hits fall: Gries' DP over the parts and the partitions, the stretches as columns, the
 * partitions as a table.
 * @param {DispersionResult} body
 */
function showDispersion(body) {
  const measure = (/** @type {number | null} */ value) => (value === null ? "unknown (a partition failed)" : decimal(value, 3));
  byId("disp-summary", HTMLElement).textContent = `DP ${measure(body.dp)} over ${number(body.parts)} ${body.parts_attribute} ` +
    `regions (${number(body.parts_with_hits)} with hits; 0: spread as the ${body.parts_attribute} sizes are, 1: all in one), ` +
    `normalised ${measure(body.dp_norm)}; over the partitions ${measure(body.dp_partitions)}.`;
  byId("disp-chart", HTMLElement).replaceChildren(stripChart(body.bins, body.parts_attribute));
  byId("disp-figure", HTMLElement).hidden = body.total === 0;
  // many tiny parts: most cannot hold a hit whatever the word, and DP says little; say so beside the chart
  const average = body.parts ? corpusInfo().size / body.parts : 0;
  const tiny = body.total > 0 && (body.parts > body.total || average < TINY_PART);
  const note = byId("disp-note", HTMLElement);
  note.hidden = !tiny;
  note.textContent = tiny
    ? `The ${number(body.parts)} ${body.parts_attribute} regions hold ${number(Math.round(average))} tokens each on average` +
      (body.parts > body.total ? `, and there are fewer hits (${number(body.total)}) than parts` : "") +
      ": most parts cannot hold a hit whatever the word, so DP comes out high even for hits spread evenly over " +
      "the corpus. Compare DP between words over the same parts, or count over larger parts."
    : "";
  showRows("disp-table", body.partitions_hits.map((p) => {
    const row = fromTemplate("disp-row", HTMLTableRowElement);
    part(row, "td.value", HTMLTableCellElement).textContent = p.id;
    fillNumbers(row, [number(p.tokens), number(p.hits), decimal(p.tokens ? (p.hits * 1e6) / p.tokens : 0)]);
    return row;
  }));
}

/**
 * A trend: the lines with their bands, a key naming each query, and a row per query and period.
 * @param {TrendResult} body
 */
function showTrend(body) {
  const periods = body.series[0]?.points ?? [];
  const sparse = periods.filter((p) => p.tokens > 0 && p.sparse).length;
  const empty = periods.filter((p) => p.tokens === 0).length;
  const undated = body.series.reduce((sum, s) => sum + s.undated, 0);
  byId("trend-summary", HTMLElement).textContent = `${body.series.map((s) => `${number(s.total)} hits of ${s.q}`).join(", ")}` +
    ` over ${number(periods.length)} ${body.period}s of ${body.by} (${periods[0]?.period ?? ""}–${periods.at(-1)?.period ?? ""})` +
    (sparse ? `; ${number(sparse)} with fewer than ${number(body.sparse_below)} tokens (hollow points)` : "") +
    (empty ? `; ${number(empty)} without any text (gaps)` : "") +
    (undated ? `; ${number(undated)} hits in texts without a date` : "") + ".";
  byId("trend-legend", HTMLElement).replaceChildren(...body.series.map((s, k) => {
    const item = fromTemplate("trend-key", HTMLLIElement);
    const line = part(item, "line", SVGLineElement);
    const style = SERIES_STYLES[k % SERIES_STYLES.length];
    line.setAttribute("stroke", style.colour);
    line.setAttribute("stroke-dasharray", style.dash);
    part(item, "span", HTMLElement).textContent = `${s.q} (${number(s.total)} hits)`;
    return item;
  }));
  byId("trend-figure", HTMLElement).hidden = periods.length === 0;
  drawTrend(byId("trend-chart", HTMLElement), body.series, body.by, body.period); // laid out: at its width
  showRows("trend-table", body.series.flatMap((s) => s.points.map((p) => {
    const row = fromTemplate("trend-row", HTMLTableRowElement);
    part(row, "td.query", HTMLTableCellElement).textContent = s.q;
    fillValue(row, p.period, p.concordance, `Show the ${number(p.hits)} hits of ${s.q} in ${p.period}`);
    fillNumbers(row, [number(p.hits), number(p.tokens),
      p.per_million === null ? "no text" : `${decimal(p.per_million)}${p.sparse ? " (little text)" : ""}`,
      p.low === null || p.high === null ? "" : `${decimal(p.low)}–${decimal(p.high)}`, number(p.texts)]);
    return row;
  })));
}

/**
 * Two searches compared: each value either search prefers, the first search's first.
 * @param {CompareResult} body
 */
function showCompare(body) {
  /** @param {ComparedSearch} side */
  const named = (side) => `${side.q} in ${side.corpus}${side.filters.length ? ` (${side.filters.join(", ")})` : ""}`;
  byId("cmp-summary", HTMLElement).textContent = `This search: ${named(body.first)}, ${number(body.first.counted)} hits counted; ` +
    `the other: ${named(body.second)}, ${number(body.second.counted)}. ${number(body.compared)} values of ${body.by} compared: ` +
    `${number(body.preferred_first)} more frequent here, ${number(body.preferred_second)} there` +
    (body.not_significant ? `, ${number(body.not_significant)} not significantly different` : "") +
    (body.first.truncated || body.second.truncated ? "; too many distinct values on a partition: counts may be low" : "") + ".";
  showCompareNext(body.next_setting);
  showRows("cmp-table", body.rows.map((r) => {
    const row = fromTemplate("cmp-row", HTMLTableRowElement);
    const here = r.preferred === "first";
    row.classList.add(here ? "first" : "second");
    fillValue(row, r.value, here ? r.hits : r.other_hits, `Show the hits with ${r.value} in ${here ? "this" : "the other"} search`);
    part(row, "td.side", HTMLTableCellElement).textContent = here ? "this search" : "the other";
    fillNumbers(row, [number(r.frequency), number(r.other_frequency), `${decimal(100 * r.share)} %`,
      `${decimal(100 * r.other_share)} %`, decimal(r.log_likelihood),
      `${decimal(r.log_ratio)} (${decimal(r.log_ratio_low)} – ${decimal(r.log_ratio_high)})`]);
    return row;
  }));
}

/**
 * When nothing is listed: why, and a button that asks again with the setting that lists rows (a looser
 * p: the page's *significant at*; a smaller min is said only, the page has no control for it).
 * @param {CompareNext | null | undefined} next
 */
function showCompareNext(next) {
  const box = byId("cmp-next", HTMLElement);
  box.hidden = !next;
  if (!next) return;
  part(box, "span", HTMLElement).textContent = `Nothing listed: ${next.detail}.`;
  const button = part(box, "button", HTMLButtonElement);
  const select = byId("cmp-p", HTMLSelectElement);
  const offered = next.parameter === "p" && [...select.options].some((o) => Number(o.value) === next.value);
  button.hidden = !offered;
  if (!offered) return;
  button.textContent = next.value >= 1 ? `List all ${number(next.rows)} values (any p)`
    : `Use p < ${next.value} (${number(next.rows)} values)`;
  button.onclick = () => {
    setControlValue("cmp-p", [...select.options].find((o) => Number(o.value) === next.value)?.value ?? "1");
    select.dispatchEvent(new Event("change", { bubbles: true }));
  };
}

/** Tokens a part of a dispersion holds on average below which DP is explained next to its chart. */
const TINY_PART = 100;

/** @param {CollocationResult} body */
function showCollocations(body) {
  byId("coll-summary", HTMLElement).textContent = `${number(body.candidates)} collocates of ${number(body.total)} hits within ${body.left} tokens left and ${body.right} right` +
    `${body.within ? ` (inside one ${body.within})` : ""}; ${number(body.f1)} tokens in the windows` +
    `; ${number(body.rows_total)} with at least ${number(body.min_freq)} co-occurrences, ranked by ${measureName(body.order)}.`;
  const head = document.createElement("tr");
  head.append(columnHead("Collocate"), sortingHead("f", body.order), columnHead("In the corpus"),
    columnHead("Expected"), columnHead("In texts"), ...body.measures.map((measure) => sortingHead(measure, body.order)));
  part(document, "#coll-table thead", HTMLTableSectionElement).replaceChildren(head);
  showRows("coll-table", body.rows.map((r) => {
    const row = fromTemplate("coll-row", HTMLTableRowElement);
    fillValue(row, r.value, r.concordance, `Show the hits with ${r.value} in their window`);
    fillNumbers(row, [number(r.f), number(r.marginal), significant(r.expected), r.texts === null ? "–" : number(r.texts)]);
    for (const measure of body.measures) {
      const score = row.insertCell();
      score.textContent = significant(r.scores[measure]);
      score.title = String(r.scores[measure]);
    }
    return row;
  }));
}

/**
 * A score to three significant digits (Dice 0.00412, MI 4.37, log-likelihood 1,234 in whole numbers from
 * 100 on), the full value in downloads and in the cell's title.
 * @param {number} n
 */
export function significant(n) {
  if (Number.isNaN(n)) return "–";
  if (!Number.isFinite(n)) return n > 0 ? "∞" : "−∞";
  if (Math.abs(n) >= 100) return n.toLocaleString("en", { maximumFractionDigits: 0 });
  return n.toLocaleString("en", { maximumSignificantDigits: 3 });
}

/** @param {string} text */
function columnHead(text) {
  const head = fromTemplate("column-head", HTMLTableCellElement);
  head.textContent = text;
  return head;
}

/**
 * A column the collocations can be ranked by: its name a button; the column ranking them marked.
 * @param {string} measure
 * @param {string} order  the measure ranking the table
 */
function sortingHead(measure, order) {
  const head = fromTemplate("sorting-head", HTMLTableCellElement);
  const button = part(head, "button", HTMLButtonElement);
  button.textContent = measureName(measure);
  button.dataset.order = measure;
  button.addEventListener("click", () => {
    setCollOrder(measure);
    setTableOffset("collocations", 0);
    if (state.shown) history.replaceState(null, "", pageUrl());
    analyse();
  });
  if (measure === order) head.setAttribute("aria-sort", "descending");
  return head;
}
