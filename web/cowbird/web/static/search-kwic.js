// @ts-check
// The concordance: the summary of a search's hits, its paging buttons, the partitions' counts and
// the KWIC rows (cloned from the page's #kwic-row template).

import { widenable } from "./search-context.js";
import { byId, fromTemplate, number, part } from "./search-dom.js";
import { PAGE } from "./search-state.js";

/** @typedef {import("./api-types").Hit} Hit  one hit as /api/v1/query answers it */
/** @typedef {import("./api-types").GdexScore} GdexScore  docs/http-api.md writes the rules out */
/** @typedef {import("./api-types").PartitionResult} PartitionResult */
/** @typedef {import("./api-types").QueryResult} QueryResult  GET /api/v1/query's answer */

/**
 * /api/v1/query?stream=1's events, one a line: `started`, then (in corpus order: `early`) the page
 * as soon as it is known and each partition's count as it comes, then the `result` — the answer
 * the plain request gives — or an `error` (a problem after the stream had started).
 * @typedef {StartedEvent | BackgroundEvent | PageEvent | CountEvent | ResultEvent | ErrorEvent} QueryEvent
 */

// the events' models are the server's (cowbird/frontend/events.py), their types generated
/** @typedef {import("./api-types").QueryStarted} StartedEvent  the search has started */
/** @typedef {import("./api-types").BackgroundNotice} BackgroundEvent  it runs as background work */
/** @typedef {import("./api-types").QueryPage} PageEvent  the page, before every partition has counted */
/** @typedef {import("./api-types").QueryCount} CountEvent  a partition has counted (or failed) */
/** @typedef {QueryResult & {event: "result"}} ResultEvent */
/** @typedef {import("./search-api.js").Problem & {event: "error"}} ErrorEvent */

/**
 * A streamed search's answer so far: the page of hits once it is known, and the partitions counted.
 * @typedef {object} Progress
 * @property {number} offset  the first hit of the page asked for
 * @property {Hit[] | null} hits  the page, once known
 * @property {number} atLeast  the hits of the partitions counted
 * @property {number} counted  partitions counted (or failed)
 * @property {number} partitions  the corpus's partitions
 * @property {string[]} failed  partitions that failed
 * @property {string} corpus  the corpus searched (several: a,b)
 */

/** Characters: a longer match wraps in its column instead of widening it. */
const LONG_MATCH = 40;

/** @param {number} n  a rate per million: whole from 10 on, else three significant digits */
const perMillion = (n) => (n >= 10 ? number(Math.round(n)) : n.toLocaleString("en", { maximumSignificantDigits: 3 }));

/**
 * @param {QueryResult} body
 * @param {number} shown  hits on the page
 * @param {import("./search-state.js").Sample | null} sample  the sample drawn, if any
 */
function summaryText(body, shown, sample) {
  const ms = `${Math.round(body.elapsed_ms)} ms`;
  if (body.total === 0) return `No hits · ${ms}`;
  const total = `${body.total.toLocaleString("en")} hit${body.total === 1 ? "" : "s"}`;
  const corpusRate = body.corpus_per_million ?? body.per_million ?? 0;
  const filtered = body.tokens != null && body.corpus_per_million != null && body.per_million !== body.corpus_per_million;
  // with filters: the rate within the texts searched, and the corpus's beside it, labelled
  const rate = body.per_million == null
    ? `${perMillion(corpusRate)} per million tokens of the corpus`
    : filtered
      ? `${perMillion(body.per_million)} per million tokens of the ${number(body.tokens || 0)} searched (${perMillion(corpusRate)} per million of the corpus)`
      : `${perMillion(body.per_million)} per million tokens`;
  const each = (body.corpora ?? []).length > 1 // several corpora: each one's total and rate
    ? ` (${(body.corpora ?? []).map((c) => `${c.corpus} ${number(c.total)}${c.per_million == null ? "" : `, ${perMillion(c.per_million)} per million`}`).join("; ")})`
    : "";
  if (body.sample && sample) return `Random sample of ${shown} of ${total}${each} (seed ${sample.seed}) · ${rate} · ${ms}`;
  if (!shown) return `No hits from ${(body.offset + 1).toLocaleString("en")} on; there are ${total}${each} · ${rate} · ${ms}`;
  return `${(body.offset + 1).toLocaleString("en")}–${(body.offset + shown).toLocaleString("en")} of ${total}${each} · ${rate} · ${ms}`;
}

/**
 * What a search has found so far, never taken for its total: "1–100 of ≥ 1,234 hits · 2 of 3
 * partitions counted".
 * @param {Progress} progress
 */
export function progressText(progress) {
  const shown = progress.hits?.length ?? 0;
  const least = Math.max(progress.atLeast, shown ? progress.offset + shown : 0);
  const range = shown ? `${number(progress.offset + 1)}–${number(progress.offset + shown)} of ` : "";
  const found = least ? `${range}≥ ${number(least)} hit${least === 1 ? "" : "s"}` : "No hits yet";
  const partitions = `${number(progress.partitions)} partition${progress.partitions === 1 ? "" : "s"}`;
  const counted = `${number(progress.counted)} of ${partitions} counted`;
  const failed = progress.failed.length ? ` (${progress.failed.join(", ")} failed)` : "";
  return `${found} · ${counted}${failed}`;
}

/**
 * A streamed search's progress: the page of its hits once known (in place of the hits shown, whose
 * paging, sample and download buttons wait for the result), else the hits shown dimmed, as they
 * are not this search's.
 * @param {Progress} progress
 * @param {string[]} show
 * @param {string[]} inline  the attributes written after each token's word
 */
export function showProgress(progress, show, inline) {
  byId("summary", HTMLElement).textContent = progressText(progress);
  const table = byId("kwic", HTMLTableElement);
  if (progress.hits === null) {
    table.classList.add("stale");
    return;
  }
  for (const id of ["prev", "next", "random", "open-download"]) byId(id, HTMLButtonElement).disabled = true;
  for (const button of document.querySelectorAll(".kwic-pager button, .kwic-pager input, #corpus-hits button")) {
    if (button instanceof HTMLButtonElement || button instanceof HTMLInputElement) button.disabled = true;
  }
  for (const id of ["incomplete", "hint", "partitions"]) byId(id, HTMLElement).hidden = true;
  const several = progress.corpus.includes(",");
  const rows = progress.hits.map((hit, i) => kwicRow(hit, show, inline, progress.offset + i + 1, several));
  metaHeader(progress.hits, several);
  part(document, "#kwic tbody", HTMLTableSectionElement).replaceChildren(...rows);
  table.classList.remove("stale");
  table.hidden = rows.length === 0;
}

/**
 * A streamed search has stopped before its result (cancelled): what it found stays, said to be
 * incomplete; the hits shown before it are no longer dimmed.
 * @param {Progress | null} progress  null: nothing came
 */
export function showStopped(progress) {
  byId("kwic", HTMLTableElement).classList.remove("stale");
  byId("summary", HTMLElement).textContent =
    progress?.hits ? `Search cancelled · ${progressText(progress)}` : "Search cancelled.";
}

/**
 * Shows a search's hits.
 * @param {QueryResult} body
 * @param {import("./search-state.js").Sample | null} sample
 * @param {string[]} show  the attributes of each match shown on it (its title)
 * @param {string[]} inline  the attributes written after each token's word
 */
export function showHits(body, sample, show, inline) {
  const shown = body.hits.length;
  const empty = body.total === 0;
  byId("summary", HTMLElement).textContent = summaryText(body, shown, sample);
  byId("actions", HTMLElement).hidden = empty; // nothing to page, sample, sort, count or download
  byId("views", HTMLElement).hidden = empty;
  byId("sorting", HTMLElement).hidden = empty;
  showPagers(body.offset, shown, body.total, Boolean(body.sample));
  byId("random", HTMLButtonElement).disabled = empty;
  byId("open-download", HTMLButtonElement).disabled = empty;
  const incomplete = byId("incomplete", HTMLElement);
  incomplete.hidden = body.complete;
  incomplete.textContent = body.complete ? "" : `Incomplete: partition(s) ${body.failed.join(", ")} did not answer; their hits are missing.`;
  const hint = byId("hint", HTMLElement);
  hint.hidden = !body.hint;
  hint.textContent = body.hint ? "This looks like CQP, searched here as plain words." : "";
  if (body.hint) { // one click: the same query as CQP
    const again = document.createElement("button");
    again.type = "button";
    again.id = "run-as-cqp";
    again.textContent = "Search it as CQP";
    again.addEventListener("click", () => document.dispatchEvent(new CustomEvent("cowbird:as-cqp")));
    hint.append(again);
  }
  byId("partitions", HTMLElement).hidden = false;
  byId("partition-list", HTMLElement).replaceChildren(
    ...body.partitions.map((p) => {
      const item = document.createElement("li");
      item.textContent = `${p.id}: ${p.status === "ok" ? (p.total ?? 0).toLocaleString("en") : `failed (${p.error})`}`;
      return item;
    }),
  );
  const several = body.corpus.includes(",");
  const rows = body.hits.map((hit, i) => kwicRow(hit, show, inline, body.offset + i + 1, several));
  metaHeader(body.hits, several);
  part(document, "#kwic tbody", HTMLTableSectionElement).replaceChildren(...rows);
  const table = byId("kwic", HTMLTableElement);
  table.classList.remove("stale");
  table.hidden = rows.length === 0;
}

/**
 * A KWIC row: the left context (right-aligned, cut at its far end: the span keeps the words in
 * order), the match (a long one wraps, never cut), the right context, the button that widens the
 * line in place and the static link.
 * @param {Hit} hit
 * @param {string[]} show
 * @param {string[]} inline  the attributes written after each token's word
 * @param {number} index  the hit's number in the order shown (1-based)
 * @param {boolean} several  several corpora searched: a column names each line's
 * @returns {HTMLTableRowElement}
 */
function kwicRow(hit, show, inline, index, several) {
  const row = fromTemplate("kwic-row", HTMLTableRowElement);
  part(row, "td.n", HTMLTableCellElement).textContent = index.toLocaleString("en");
  if (hit.gdex) part(row, "td.n", HTMLTableCellElement).after(gdexScore(hit.gdex));
  if (several) {
    const cell = document.createElement("td");
    cell.className = "corpus";
    cell.textContent = hit.corpus;
    part(row, "td.n", HTMLTableCellElement).after(cell);
  }
  const tools = part(row, "td.tools", HTMLTableCellElement);
  for (const [column, value] of Object.entries(hit.meta ?? {})) { // the metadata columns chosen
    const cell = document.createElement("td");
    cell.className = "meta";
    cell.textContent = value ?? "–";
    cell.title = `${column}: ${value ?? "(outside any region)"}`;
    row.insertBefore(cell, tools);
  }
  part(row, "td.left > span", HTMLElement).replaceChildren(...withEdges(hit, "left"));
  const match = part(row, "td.match", HTMLTableCellElement);
  if (hit.match.length > LONG_MATCH) match.classList.add("long");
  const mark = part(match, "mark", HTMLElement);
  mark.replaceChildren(...withEdges(hit, "match"));
  const details = show.map((a) => `${a}: ${hit.attributes[a] ?? ""}`).join(" · ");
  if (details) {
    mark.title = details;
    mark.tabIndex = 0;
    mark.setAttribute("aria-label", `${hit.match} (${details})`);
  }
  part(row, "td.right", HTMLTableCellElement).replaceChildren(...withEdges(hit, "right"));
  const link = part(row, "a.ref", HTMLAnchorElement);
  link.href = hit.ref;
  link.title = `Static link to position ${hit.position}`;
  link.setAttribute("aria-label", `Static link to position ${hit.position}`);
  widenable(row, hit, inline, index);
  return row;
}

/**
 * A GDEX-sorted line's score, in its own column after its number, with each rule's value (and what
 * the rare-word, number and URL rules counted) in its title and for screen readers.
 * @param {GdexScore} gdex
 * @returns {HTMLTableCellElement}
 */
function gdexScore(gdex) {
  const score = document.createElement("td");
  score.className = "gdex";
  score.textContent = gdex.score.toFixed(3);
  const values = Object.entries(gdex.values).map(([rule, value]) => `${rule} ${Number(value.toFixed(3))}`).join(", ");
  const counted = [["rare words", gdex.rare], ["numbers or symbols", gdex.numbers], ["URLs", gdex.urls]]
    .filter(([, tokens]) => tokens.length).map(([what, tokens]) => `${what}: ${/** @type {string[]} */ (tokens).join(" ")}`);
  const title = `GDEX score ${gdex.score.toFixed(6)} of a sentence of ${gdex.tokens} tokens` +
    (values ? ` — ${values}` : " (outside any sentence)") + (counted.length ? `; ${counted.join("; ")}` : "");
  score.title = title;
  score.setAttribute("aria-label", title);
  return score;
}

/**
 * A part of a line (left, match, right) with a sign where another text (‖) or sentence (|) begins
 * or ends inside it, each named for screen readers; the sign is the stylesheet's, so that the
 * line's text (copied, searched in the page) is the corpus's.
 * @param {Hit} hit
 * @param {"left" | "match" | "right"} name
 * @returns {(string | HTMLElement)[]}
 */
function withEdges(hit, name) {
  const text = hit[name];
  const here = (hit.breaks ?? []).filter((b) => b.part === name);
  if (!here.length) return [text];
  const chars = Array.from(text); // offsets count code points, as the server does
  /** @type {Map<number, string>} the strongest boundary at each place: a text's over a sentence's */
  const at = new Map();
  for (const b of here) if (b.region === "text" || !at.has(b.at)) at.set(b.at, b.region);
  /** @type {(string | HTMLElement)[]} */
  const out = [];
  let from = 0;
  for (const place of [...at.keys()].sort((a, b) => a - b)) {
    if (place > from) out.push(chars.slice(from, place).join(""));
    const kind = at.get(place) === "text" ? "text" : "sentence";
    const edge = document.createElement("span"); // its sign drawn by the stylesheet: the line's text stays the corpus's
    edge.className = `edge ${kind}`;
    edge.title = `another ${kind}`;
    edge.setAttribute("role", "img");
    edge.setAttribute("aria-label", `another ${kind}`);
    out.push(edge);
    from = place;
  }
  out.push(chars.slice(from).join(""));
  return out;
}

/**
 * The metadata columns' headers: the s-attributes the lines carry (the page's "Metadata columns"),
 * and the corpus's when several are searched.
 * @param {Hit[]} hits
 * @param {boolean} several
 */
function metaHeader(hits, several) {
  const head = part(document, "#kwic thead tr", HTMLTableRowElement);
  for (const old of head.querySelectorAll("th.meta, th.corpus, th.gdex")) old.remove();
  if (hits.some((hit) => hit.gdex)) { // sorted by GDEX: the score each line was sorted on, best first
    const header = document.createElement("th");
    header.scope = "col";
    header.className = "gdex";
    header.textContent = "GDEX";
    header.title = "Good-example score of the line's sentence (1 is best), highest first; equal scores in corpus order";
    part(head, "th.n", HTMLTableCellElement).after(header);
  }
  gdexNote(hits);
  if (several) {
    const header = document.createElement("th");
    header.scope = "col";
    header.className = "corpus";
    header.textContent = "Corpus";
    part(head, "th.n", HTMLTableCellElement).after(header);
  }
  const tools = part(head, "th.tools", HTMLTableCellElement);
  for (const column of Object.keys(hits[0]?.meta ?? {})) {
    const header = document.createElement("th");
    header.scope = "col";
    header.className = "meta";
    header.textContent = column;
    head.insertBefore(header, tools);
  }
}

/**
 * What a GDEX-sorted page shows: its scores' range, and that lines of equal score are in corpus order
 * (a page of lines all scoring the same looks unsorted otherwise).
 * @param {Hit[]} hits
 */
function gdexNote(hits) {
  const note = byId("gdex-note", HTMLElement);
  const scores = hits.flatMap((hit) => (hit.gdex ? [hit.gdex.score] : []));
  note.hidden = scores.length === 0;
  if (!scores.length) return;
  const [best, worst] = [scores[0].toFixed(3), scores[scores.length - 1].toFixed(3)];
  note.textContent = "Good examples first: each line is the sentence it was scored on, and the GDEX column its " +
    `score (1 is best; its title says what made it). ${best === worst ? `Every line here scores ${best}` : `Scores ${best} to ${worst} here`}` +
    "; lines of equal score are in corpus order.";
}

/** @param {number} total  hits @returns {number} the offset of the last page's first hit */
export const lastPage = (total) => Math.max(0, Math.floor((total - 1) / PAGE) * PAGE);

/**
 * The pagers above and below the lines (CQPweb's): the first page, the previous, a page by its
 * number (Enter or Go), the next and the last, over the hits in the order shown — sorted or not,
 * several corpora's as one run. A random sample is one page: its pagers are off. The page is the
 * URL's `offset` (search-state.js), so that each page can be bookmarked and reached with Back.
 * @param {number} offset  the first hit of the page shown
 * @param {number} shown  hits on it
 * @param {number} total
 * @param {boolean} sampled
 */
export function showPagers(offset, shown, total, sampled) {
  const pages = Math.max(1, Math.ceil(total / PAGE));
  const page = Math.min(pages, Math.floor(offset / PAGE) + 1);
  for (const pager of document.querySelectorAll(".kwic-pager")) {
    /** @param {string} name */
    const button = (name) => part(pager, `button.${name}`, HTMLButtonElement);
    button("first").disabled = button("prev").disabled = sampled || offset === 0;
    button("next").disabled = button("last").disabled = sampled || offset + shown >= total;
    const input = part(pager, "input.page-number", HTMLInputElement);
    input.max = String(pages);
    input.value = String(page);
    input.disabled = button("go").disabled = sampled || pages < 2;
    input.setAttribute("aria-label", `Page number, 1 to ${number(pages)}`);
    part(pager, ".pages", HTMLElement).textContent = `of ${number(pages)}`;
  }
  byId("pager-bottom", HTMLElement).hidden = sampled || shown === 0 || pages < 2;
}

/**
 * Several corpora searched: a line per corpus with its hits and rate (per million tokens of its
 * texts searched: corpora of very different sizes compare), and the way to its hits — in corpus
 * order a button that opens the page holding its first hit (the answer's `first`, exact: each
 * corpus's hits follow those of the ones before it), and always a link that searches it alone
 * (the way in a sorted order, where its hits are spread over the pages).
 * @param {QueryResult} body
 * @param {(corpus: string) => string} alone  the URL of the search shown, in that corpus alone
 * @param {(offset: number) => void} open  shows the page of hits from that offset
 */
export function showCorpusHits(body, alone, open) {
  const list = byId("corpus-hits", HTMLElement);
  const corpora = body.corpora ?? [];
  list.hidden = corpora.length < 2 || body.total === 0;
  list.replaceChildren(...(list.hidden ? [] : corpora).map((c) => {
    const item = document.createElement("li");
    item.dataset.corpus = c.corpus;
    const hits = `${number(c.total)} hit${c.total === 1 ? "" : "s"}`;
    const rate = c.per_million == null ? "" : `, ${perMillion(c.per_million)} per million tokens`;
    const tokens = c.tokens == null ? "" : ` of ${number(c.tokens)}`;
    const name = document.createElement("strong");
    name.textContent = c.corpus;
    item.append(name, `: ${hits}${rate}${tokens}`);
    if (c.total && c.first != null) {
      const from = Math.floor(c.first / PAGE) * PAGE;
      const page = from / PAGE + 1;
      const go = document.createElement("button");
      go.type = "button";
      go.className = "to-corpus";
      go.textContent = `Show ${c.corpus}'s ${hits}`;
      go.title = `Its first hit is hit ${number(c.first + 1)} of all, on page ${number(page)}`;
      go.setAttribute("aria-label", `Show ${c.corpus}'s ${hits}, from page ${number(page)}`);
      go.addEventListener("click", () => open(from));
      item.append(" ", go);
    }
    if (c.total) {
      const link = document.createElement("a");
      link.className = "corpus-alone";
      link.href = alone(c.corpus);
      link.textContent = `search ${c.corpus} alone`;
      item.append(" ", link);
    }
    return item;
  }));
}

/** No hits on the page: after a failed search nothing of an earlier one stays to be taken for its answer. */
export function clearHits() {
  byId("summary", HTMLElement).textContent = "";
  for (const id of ["actions", "views", "sorting", "partitions", "incomplete", "hint", "kwic", "pager-bottom", "corpus-hits"]) {
    byId(id, HTMLElement).hidden = true;
  }
  part(document, "#kwic tbody", HTMLTableSectionElement).replaceChildren();
  byId("kwic", HTMLTableElement).classList.remove("stale");
}
