// @ts-check
// Word sketches (GET /api/v1/sketch): a lemma's collocates in each relation of the corpus's sketch
// grammar, the most salient (logDice) first, in the corpus chosen in the form or the texts its
// filters choose; with a second lemma, the two sketches compared (GET /api/v1/sketchdiff); or the
// words whose sketches are most like it (GET /api/v1/thesaurus). Shown only for corpora with a
// sketch grammar. Each collocate opens its instances on this page; each similar word its own sketch.

import { ApiProblem, aborted, apiUrl, begin, end, getJson } from "./search-api.js";
import { byId, corpusInfo, decimal, fromTemplate, number, part } from "./search-dom.js";
import { readSearch } from "./search-form.js";
import { fillNumbers, fillValue, showRows } from "./search-tables.js";

/**
 * @typedef {object} SketchRow
 * @property {string} value
 * @property {number} f
 * @property {number} total
 * @property {number} log_dice
 * @property {string | null} concordance
 */

/**
 * @typedef {object} SketchRelation
 * @property {string} name
 * @property {number} head_total
 * @property {number | null} share
 * @property {number} distinct
 * @property {SketchRow[]} rows
 */

/**
 * @typedef {object} SketchResult
 * @property {string} headword
 * @property {number} frequency
 * @property {string[]} filters
 * @property {SketchRelation[]} relations
 * @property {boolean} complete
 * @property {string[]} failed
 */

/**
 * @typedef {object} DifferenceRow
 * @property {string} value
 * @property {number} f
 * @property {number} other_f
 * @property {number | null} log_dice
 * @property {number | null} other_log_dice
 * @property {number} difference
 * @property {string | null} concordance
 * @property {string | null} other_concordance
 */

/**
 * @typedef {object} DifferenceRelation
 * @property {string} name
 * @property {DifferenceRow[]} shared
 * @property {DifferenceRow[]} only_first
 * @property {DifferenceRow[]} only_second
 */

/**
 * @typedef {object} DifferenceResult
 * @property {string} headword
 * @property {string} other
 * @property {number} frequency
 * @property {number} other_frequency
 * @property {DifferenceRelation[]} relations
 * @property {boolean} complete
 * @property {string[]} failed
 */

/**
 * @typedef {object} ThesaurusRow
 * @property {string} word
 * @property {number} score
 * @property {number} shared
 */

/**
 * @typedef {object} ThesaurusResult
 * @property {string} headword
 * @property {number} frequency
 * @property {number} contexts
 * @property {number} candidates
 * @property {ThesaurusRow[]} rows
 * @property {boolean} complete
 * @property {string[]} failed
 */

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
  for (const f of search.filters) params.append("filter", `${f.attribute}${f.negated ? "!~" : "~"}${f.regex}`);
  return params;
}

/**
 * Sketches the lemma (or, with a second lemma, compares the two; with ``similar``, lists the words
 * most like it). A newer request aborts the one under way.
 * @param {boolean} [similar]
 */
export async function sketchWord(similar = false) {
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
  } catch (error) {
    if (aborted(error)) return;
    summary.textContent = error instanceof ApiProblem ? error.message : `The word sketch failed: ${String(error)}`;
    byId("sk-relations", HTMLElement).replaceChildren();
    byId("sk-thesaurus", HTMLTableElement).hidden = true;
    byId("sk-downloads", HTMLElement).hidden = true;
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

/** @param {SketchResult} body */
function showSketch(body) {
  byId("sk-thesaurus", HTMLTableElement).hidden = true;
  const tables = body.relations.filter((r) => r.rows.length).map((relation) => {
    const rows = relation.rows.map((row) => {
      const line = fromTemplate("sk-row", HTMLTableRowElement);
      fillValue(line, row.value, row.concordance, `Search the ${number(row.f)} instances of ${relation.name} ${row.value}`);
      fillNumbers(line, [number(row.f), decimal(row.log_dice)]);
      return line;
    });
    const share = relation.share === null ? "" : `, ${decimal(100 * relation.share, 1)} % of its occurrences`;
    const more = relation.distinct > rows.length ? `; the first ${number(rows.length)} of ${number(relation.distinct)}` : "";
    const instances = `${number(relation.head_total)} instance${relation.head_total === 1 ? "" : "s"}`;
    return relationTable("sk-table", `${relation.name}: ${instances}${share}${more}`, rows);
  });
  byId("sk-relations", HTMLElement).replaceChildren(...tables);
  const where = body.filters.length ? " in the texts the filters choose" : "";
  const parts = [body.frequency === 0
    ? `${body.headword} does not occur${where}: lemmas are written as the corpus writes them (house, not houses).`
    : `${body.headword}: ${number(body.frequency)} occurrences${where}, collocates in ${number(tables.length)} of ${number(body.relations.length)} relations.`];
  if (!body.complete) parts.push(`Partition(s) ${body.failed.join(", ")} did not answer: their counts are missing.`);
  byId("sk-summary", HTMLElement).textContent = parts.join(" ");
}

/** @param {DifferenceResult} body */
function showDifference(body) {
  byId("sk-thesaurus", HTMLTableElement).hidden = true;
  const tables = [];
  for (const relation of body.relations) {
    const groups = /** @type {const} */ ([["only_first", body.headword], ["shared", "both"], ["only_second", body.other]]);
    const rows = groups.flatMap(([group, who]) => relation[group].map((row) => {
      const line = fromTemplate("skd-row", HTMLTableRowElement);
      const link = row.concordance ?? row.other_concordance;
      fillValue(line, row.value, link, `Search the instances of ${relation.name} ${row.value}`);
      const prefers = group !== "shared" ? `${who} only` : row.difference > 0 ? body.headword : row.difference < 0 ? body.other : "both alike";
      fillNumbers(line, [number(row.f), number(row.other_f), row.log_dice === null ? "–" : decimal(row.log_dice),
        row.other_log_dice === null ? "–" : decimal(row.other_log_dice), prefers]);
      line.classList.add(group === "only_first" || (group === "shared" && row.difference > 0) ? "prefers-first"
        : group === "only_second" || row.difference < 0 ? "prefers-second" : "prefers-both");
      return line;
    }));
    if (!rows.length) continue;
    const table = relationTable("skd-table", relation.name, rows);
    part(table, "th.f1", HTMLTableCellElement).textContent = `Frequency with ${body.headword}`;
    part(table, "th.f2", HTMLTableCellElement).textContent = `Frequency with ${body.other}`;
    part(table, "th.ld1", HTMLTableCellElement).textContent = `logDice with ${body.headword}`;
    part(table, "th.ld2", HTMLTableCellElement).textContent = `logDice with ${body.other}`;
    tables.push(table);
  }
  byId("sk-relations", HTMLElement).replaceChildren(...tables);
  const parts = [`${body.headword} (${number(body.frequency)}) and ${body.other} (${number(body.other_frequency)}) in ` +
    `${number(tables.length)} relations: the collocates only ${body.headword} has first, then those both have, then those only ${body.other} has.`];
  if (!body.complete) parts.push(`Partition(s) ${body.failed.join(", ")} did not answer: their counts are missing.`);
  byId("sk-summary", HTMLElement).textContent = parts.join(" ");
}

/** @param {ThesaurusResult} body */
function showThesaurus(body) {
  byId("sk-relations", HTMLElement).replaceChildren();
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
