// @ts-check
// Word sketches (GET /api/v1/sketch): a lemma's collocates in each relation of the corpus's sketch
// grammar, the most salient (logDice) first, in the corpus chosen in the form or the texts its
// filters choose; with a second lemma, the two sketches compared (GET /api/v1/sketchdiff); or the
// words whose sketches are most like it (GET /api/v1/thesaurus). Shown only for corpora with a
// sketch grammar. Each collocate opens its instances on this page; each similar word its own sketch.
// Each relation is named by its grammar's label ("objects of "buy""), its id (object_of) in its title.
// The sketch shown lives in the page's URL (sketch=, sketch_other=, sketch_similar=, sketch_min=,
// sketch_limit=, with the corpus and filters): a new sketch is a new entry of the history, so that a
// sketch is bookmarked, shared and reloaded, and Back and Forward move between searches and sketches.
// A sketch difference is a grid of relation tables (one column on a phone), each collocate's row
// shaded from one word's colour through neutral to the other's by how one-sided it is (Sketch
// Engine's), its side also written out in the row: colour is never the only sign.

import { ApiProblem, aborted, apiUrl, begin, cancel, end, getJson } from "./search-api.js";
import { byId, controlValue, corpusInfo, decimal, fromTemplate, number, part, setControlValue } from "./search-dom.js";
import { readSearch } from "./search-form.js";
import { filterText, setSketched, showInUrl, state } from "./search-state.js";
import { fillNumbers, fillValue, showRows } from "./search-tables.js";

/** @typedef {import("./api-types").WordSketchResult} SketchResult */
/** @typedef {import("./api-types").SketchDifferenceResult} DifferenceResult */
/** @typedef {import("./api-types").ThesaurusResult} ThesaurusResult */

/**
 * What the controls ask for (the corpus and filters of the form): the lemma, the minimum, the rows.
 * @returns {URLSearchParams}
 */
function sketchParams() {
  const search = readSearch();
  const headword = byId("sk-headword", HTMLInputElement).value.trim();
  if (!headword) throw new ApiProblem({ detail: "Type a lemma to sketch." });
  const params = new URLSearchParams({
    corpus: search.corpus,
    headword,
    min_freq: String(Math.max(1, Number(byId("sk-min", HTMLInputElement).value) || 1)),
    limit: byId("sk-limit", HTMLSelectElement).value,
  });
  for (const f of search.filters) params.append("filter", filterText(f));
  return params;
}

/** Each setting's control value as the page was built: a setting at its default stays out of the URL. */
const SKETCH_DEFAULTS = { "sk-min": "1", "sk-limit": "25" };
/** The URL parameter of each setting. */
const SKETCH_SETTINGS = /** @type {const} */ ({ "sk-min": "sketch_min", "sk-limit": "sketch_limit" });

/**
 * The sketch asked for, as the page's URL writes it: the lemma (and the other lemma, or similar
 * words), the settings changed from their defaults, the corpus and the filters.
 * @param {URLSearchParams} params  what the sketch asked the API for
 * @param {boolean} similar
 * @returns {URLSearchParams}
 */
function sketchedUrl(params, similar) {
  const url = new URLSearchParams({ corpus: params.get("corpus") ?? "" });
  for (const filter of params.getAll("filter")) url.append("filter", filter);
  url.set("sketch", params.get("headword") ?? "");
  const other = params.get("other");
  if (similar) url.set("sketch_similar", "1");
  else if (other) url.set("sketch_other", other);
  for (const [id, name] of Object.entries(SKETCH_SETTINGS)) {
    const value = controlValue(id);
    if (value !== SKETCH_DEFAULTS[/** @type {keyof typeof SKETCH_DEFAULTS} */ (id)]) url.set(name, value);
  }
  return url;
}

/**
 * The sketch a URL holds (sketch= and its settings): the controls set, the section opened and the
 * sketch asked for again — a bookmark, a shared link, Back. A URL without one takes the sketch
 * shown off the page (Back from a sketch to the search before it).
 * @param {URLSearchParams} params
 */
export function restoreSketch(params) {
  const headword = params.get("sketch");
  if (headword === null) {
    if (state.sketched) {
      cancel("sketch");
      setSketched(null);
      clearSketch("");
    }
    return;
  }
  showForCorpus();
  byId("sk-headword", HTMLInputElement).value = headword;
  byId("sk-other", HTMLInputElement).value = params.get("sketch_other") ?? "";
  for (const [id, name] of Object.entries(SKETCH_SETTINGS)) {
    setControlValue(id, params.get(name) ?? SKETCH_DEFAULTS[/** @type {keyof typeof SKETCH_DEFAULTS} */ (id)]);
  }
  byId("sketch", HTMLDetailsElement).open = true;
  void sketchWord(params.get("sketch_similar") === "1", false);
}

/**
 * No sketch on the page: its tables, the thesaurus, the legend and the downloads gone, ``summary`` said.
 * @param {string} summary
 */
function clearSketch(summary) {
  byId("sk-summary", HTMLElement).textContent = summary;
  byId("sk-relations", HTMLElement).replaceChildren();
  byId("sk-relations", HTMLElement).classList.remove("difference");
  byId("sk-legend", HTMLElement).hidden = true;
  byId("sk-thesaurus", HTMLTableElement).hidden = true;
  byId("sk-downloads", HTMLElement).hidden = true;
}

/**
 * Sketches the lemma (or, with a second lemma, compares the two; with ``similar``, lists the words
 * most like it). A newer request aborts the one under way. The sketch goes into the page's URL (a
 * new entry in the history when ``push``).
 * @param {boolean} [similar]
 * @param {boolean} [push]
 */
export async function sketchWord(similar = false, push = true) {
  const signal = begin("sketch");
  const summary = byId("sk-summary", HTMLElement);
  const section = byId("sketch", HTMLElement);
  section.setAttribute("aria-busy", "true");
  summary.textContent = similar ? "Comparing sketches…" : "Counting…";
  try {
    const params = sketchParams();
    const other = byId("sk-other", HTMLInputElement).value.trim();
    if (similar) {
      params.set("limit", "25");
      showThesaurus(/** @type {ThesaurusResult} */ (await getJson("thesaurus", params, signal)));
      offerFiles("thesaurus", params);
    } else if (other) {
      params.set("other", other);
      showDifference(/** @type {DifferenceResult} */ (await getJson("sketchdiff", params, signal)));
      offerFiles("sketchdiff", params);
    } else {
      showSketch(/** @type {SketchResult} */ (await getJson("sketch", params, signal)));
      offerFiles("sketch", params);
    }
    setSketched(sketchedUrl(params, similar));
    showInUrl(push);
  } catch (error) {
    if (aborted(error)) return;
    clearSketch(error instanceof ApiProblem ? error.message : `The word sketch failed: ${String(error)}`);
  } finally {
    end("sketch", signal);
    section.setAttribute("aria-busy", "false");
  }
}

/**
 * A relation's table from a template: its caption, its rows.
 * @param {string} template
 * @param {string} caption
 * @param {HTMLTableRowElement[]} rows
 * @returns {HTMLTableElement}
 */
function relationTable(template, caption, rows) {
  const table = fromTemplate(template, HTMLTableElement);
  part(table, "caption", HTMLTableCaptionElement).textContent = caption;
  part(table, "tbody", HTMLTableSectionElement).replaceChildren(...rows);
  return table;
}

/**
 * The relation's table named as users read it: its label, its id in the title (what relation= names).
 * @param {HTMLTableElement} table
 * @param {{name: string, label: string}} relation
 */
function nameTable(table, relation) {
  table.dataset.relation = relation.name;
  part(table, "caption", HTMLTableCaptionElement).title = `relation ${relation.name} of the sketch grammar`;
}

/** @param {SketchResult} body */
function showSketch(body) {
  byId("sk-thesaurus", HTMLTableElement).hidden = true;
  byId("sk-legend", HTMLElement).hidden = true;
  byId("sk-relations", HTMLElement).classList.remove("difference");
  const tables = body.relations.filter((r) => r.rows.length).map((relation) => {
    const rows = relation.rows.map((row) => {
      const line = fromTemplate("sk-row", HTMLTableRowElement);
      fillValue(line, row.value, row.concordance, `Search the ${number(row.f)} instances of ${relation.label}: ${row.value}`);
      fillNumbers(line, [number(row.f), decimal(row.log_dice)]);
      return line;
    });
    const share = relation.share === null ? "" : `, ${decimal(100 * relation.share, 1)} % of its occurrences`;
    const more = relation.distinct > rows.length ? `; the first ${number(rows.length)} of ${number(relation.distinct)}` : "";
    const instances = `${number(relation.head_total)} instance${relation.head_total === 1 ? "" : "s"}`;
    const table = relationTable("sk-table", `${relation.label}: ${instances}${share}${more}`, rows);
    nameTable(table, relation);
    return table;
  });
  byId("sk-relations", HTMLElement).replaceChildren(...tables);
  const where = body.filters.length ? " in the texts the filters choose" : "";
  const parts = [body.frequency === 0
    ? `${body.headword} does not occur${where}: lemmas are written as the corpus writes them (house, not houses).`
    : `${body.headword}: ${number(body.frequency)} occurrences${where}, collocates in ${number(tables.length)} of ${number(body.relations.length)} relations.`];
  if (!body.complete) parts.push(`Partition(s) ${body.failed.join(", ")} did not answer: their counts are missing.`);
  byId("sk-summary", HTMLElement).textContent = parts.join(" ");
}

/**
 * How one-sided a shared collocate is, in shades: a logDice difference of at least ``SIDE_STEPS[i]``
 * either way is shade i + 1 of that word's colour (below the first step: both alike, neutral); a
 * collocate of one word only is its darkest shade, 4. Sketch Engine shades its differences in such steps.
 */
const SIDE_STEPS = [0.5, 2, 4];

/**
 * A row's side: which word prefers the collocate and how strongly (its colour's shade), and the same
 * in words for the Side cell (an arrow towards the word's columns).
 * @param {"only_first" | "shared" | "only_second"} group
 * @param {number} difference
 * @param {string} first
 * @param {string} second
 * @returns {{shade: string, text: string}}
 */
function sideOf(group, difference, first, second) {
  if (group === "only_first") return { shade: "side-first-4", text: `◀ ${first} only` };
  if (group === "only_second") return { shade: "side-second-4", text: `${second} only ▶` };
  const level = SIDE_STEPS.filter((step) => Math.abs(difference) >= step).length;
  if (level === 0) return { shade: "side-both", text: "= both alike" };
  return difference > 0 ? { shade: `side-first-${level}`, text: `◀ ${first}` } : { shade: `side-second-${level}`, text: `${second} ▶` };
}

/**
 * A column heading of a difference's table: the word, "Frequency with" / "logDice with" said to screen readers.
 * @param {HTMLTableElement} table
 * @param {string} cell
 * @param {string} what
 * @param {string} word
 */
function wordHeading(table, cell, what, word) {
  const hidden = document.createElement("span");
  hidden.className = "visually-hidden";
  hidden.textContent = `${what} with `;
  part(table, `th.${cell}`, HTMLTableCellElement).replaceChildren(hidden, word);
}

/** @param {DifferenceResult} body */
function showDifference(body) {
  byId("sk-thesaurus", HTMLTableElement).hidden = true;
  const tables = [];
  for (const relation of body.relations) {
    const groups = /** @type {const} */ (["only_first", "shared", "only_second"]);
    const rows = groups.flatMap((group) => relation[group].map((row) => {
      const line = fromTemplate("skd-row", HTMLTableRowElement);
      const link = row.concordance ?? row.other_concordance;
      fillValue(line, row.value, link, `Search the instances of ${relation.label}: ${row.value}`);
      const side = sideOf(group, row.difference, body.headword, body.other);
      fillNumbers(line, [number(row.f), number(row.other_f), row.log_dice === null ? "–" : decimal(row.log_dice),
        row.other_log_dice === null ? "–" : decimal(row.other_log_dice)]);
      part(line, "td.side", HTMLTableCellElement).textContent = side.text;
      line.classList.add(side.shade);
      return line;
    }));
    if (!rows.length) continue;
    const table = relationTable("skd-table", relation.label, rows);
    nameTable(table, relation);
    wordHeading(table, "f1", "Frequency", body.headword);
    wordHeading(table, "f2", "Frequency", body.other);
    wordHeading(table, "ld1", "logDice", body.headword);
    wordHeading(table, "ld2", "logDice", body.other);
    tables.push(table);
  }
  const relations = byId("sk-relations", HTMLElement);
  relations.classList.add("difference");
  relations.replaceChildren(...tables);
  const legend = fromTemplate("skd-legend", HTMLParagraphElement);
  part(legend, ".first", HTMLElement).textContent = `${body.headword} only ◀`;
  part(legend, ".second", HTMLElement).textContent = `▶ ${body.other} only`;
  part(legend, ".both", HTMLElement).textContent = `Each row's colour says which word prefers the collocate and how ` +
    `strongly: blue for ${body.headword}, orange for ${body.other}, white for both alike; its Side column says the same in words.`;
  byId("sk-legend", HTMLElement).replaceChildren(legend);
  byId("sk-legend", HTMLElement).hidden = tables.length === 0;
  const parts = [`${body.headword} (${number(body.frequency)}) and ${body.other} (${number(body.other_frequency)}) in ` +
    `${number(tables.length)} relations: the collocates only ${body.headword} has first, then those both have, then those only ${body.other} has.`];
  if (!body.complete) parts.push(`Partition(s) ${body.failed.join(", ")} did not answer: their counts are missing.`);
  byId("sk-summary", HTMLElement).textContent = parts.join(" ");
}

/** @param {ThesaurusResult} body */
function showThesaurus(body) {
  byId("sk-relations", HTMLElement).replaceChildren();
  byId("sk-relations", HTMLElement).classList.remove("difference");
  byId("sk-legend", HTMLElement).hidden = true;
  const rows = body.rows.map((row, i) => {
    const line = fromTemplate("th-row", HTMLTableRowElement);
    part(line, "td.rank", HTMLTableCellElement).textContent = number(i + 1);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "link";
    button.textContent = row.word;
    button.title = `The word sketch of ${row.word}`;
    button.addEventListener("click", () => {
      byId("sk-headword", HTMLInputElement).value = row.word;
      byId("sk-other", HTMLInputElement).value = "";
      void sketchWord();
    });
    part(line, "td.value", HTMLTableCellElement).replaceChildren(button);
    fillNumbers(line, [decimal(row.score, 3), number(row.shared)]);
    return line;
  });
  showRows("sk-thesaurus", rows);
  const parts = [rows.length
    ? `The ${number(rows.length)} words most like ${body.headword}, of ${number(body.candidates)} sharing one of its ${number(body.contexts)} contexts.`
    : `No word shares a context with ${body.headword}.`];
  if (!body.complete) parts.push(`Partition(s) ${body.failed.join(", ")} did not answer: their counts are missing.`);
  byId("sk-summary", HTMLElement).textContent = parts.join(" ");
}

/**
 * The download links: the same answer as a file with its metadata block, every row.
 * @param {string} path
 * @param {URLSearchParams} params
 */
function offerFiles(path, params) {
  for (const format of ["tsv", "csv", "xlsx"]) {
    const file = new URLSearchParams(params);
    file.set("format", format);
    file.set("provenance", "1");
    if (path !== "thesaurus") file.delete("limit");
    const link = byId(`sk-${format}`, HTMLAnchorElement);
    link.href = `${apiUrl(path)}?${file}`;
    link.download = "";
  }
  byId("sk-downloads", HTMLElement).hidden = false;
}

/** The section is there for corpora with a sketch grammar only. */
function showForCorpus() {
  const sketches = corpusInfo().sketches ?? [];
  byId("sketch", HTMLDetailsElement).hidden = sketches.length === 0;
}

/** Wires the controls: Sketch (or Enter in a field) sketches, Similar words lists the thesaurus entry. */
export function setUpSketches() {
  SKETCH_DEFAULTS["sk-min"] = byId("sk-min", HTMLInputElement).value;
  SKETCH_DEFAULTS["sk-limit"] = byId("sk-limit", HTMLSelectElement).value;
  showForCorpus();
  byId("corpus", HTMLSelectElement).addEventListener("change", showForCorpus);
  byId("sk-run", HTMLButtonElement).addEventListener("click", () => void sketchWord());
  byId("sk-similar", HTMLButtonElement).addEventListener("click", () => void sketchWord(true));
  for (const id of ["sk-headword", "sk-other", "sk-min"]) {
    byId(id, HTMLInputElement).addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        void sketchWord();
      }
    });
  }
}
