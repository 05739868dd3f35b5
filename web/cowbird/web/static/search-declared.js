// @ts-check
// The declared analyses' tabs (cowbird.core.declared: each declared once on the server, in
// cowbird/core/analyses/NAME.py). The page builds each one's tab, controls and table from the
// declaration (search.html, from the JSON island #declared-analyses); this module fills the controls
// that choose one of the corpus's attributes, builds the request from the controls, keeps the page
// of rows shown, and shows a page of the answer: its rows in the table, each cell as the analysis's
// page module (static/analysis-NAME.js, loaded when its tab is first shown) writes it, and its
// summary. A page module exports `summary(body)` (a sentence about the answer) and
// `cell(column, row, body, search)` (a cell's content: text or a node).

import { byId, number } from "./search-dom.js";

/**
 * A control of a declared analysis's tab, from one of its parameters.
 * @typedef {object} DeclaredControl
 * @property {string} name  the parameter
 * @property {"p" | "s" | "meta" | null} choose  a list of the corpus's attributes of that kind
 * @property {boolean} optional  "none" is a choice (the parameter's default is none)
 * @property {string} default
 */
/**
 * @typedef {object} Declared
 * @property {string} name  its route, /api/v1/NAME, and its tab's id, tab-NAME
 * @property {string} label
 * @property {string[]} columns  its rows' fields, in the table's order
 * @property {DeclaredControl[]} controls
 */
/**
 * What a page module shows of an answer.
 * @typedef {object} PageModule
 * @property {(body: DeclaredAnswer) => string} summary
 * @property {(column: string, row: Record<string, unknown>, body: DeclaredAnswer, search: URLSearchParams) =>
 *   string | Node} cell
 */
/**
 * What every declared analysis answers (its own fields besides).
 * @typedef {{total: number, complete: boolean, failed: string[], offset: number, rows_total: number,
 *   rows: Record<string, unknown>[]} & Record<string, unknown>} DeclaredAnswer
 */

const island = document.getElementById("declared-analyses");
/** @type {readonly Declared[]} */
export const DECLARED = JSON.parse(island?.textContent || "[]");

/** Rows of a page of a declared analysis's table. */
export const DECLARED_ROWS = 100;

/** Each control's id (NAME-PARAMETER) and its URL parameter (NAME_PARAMETER) when not at its default. */
export const DECLARED_SETTINGS = Object.fromEntries(DECLARED.flatMap(
  (view) => view.controls.map((c) => [`${view.name}-${c.name}`, `${view.name}_${c.name}`])));

/** @type {Map<string, number>} the first row of each declared analysis's page */
const offsets = new Map();

/** @param {string} name */
export function declaredOffset(name) {
  return offsets.get(name) ?? 0;
}

/**
 * @param {string} name
 * @param {number} offset
 */
export function setDeclaredOffset(name, offset) {
  offsets.set(name, Math.max(0, offset));
}

/** @param {string} view */
export function declared(view) {
  return DECLARED.find((d) => d.name === view);
}

/**
 * The controls that choose one of the corpus's attributes, filled with its own (keeping a choice it has).
 * @param {{p_attributes: string[], s_attributes: string[], meta: string[]}} info
 */
export function fillDeclared(info) {
  const kinds = { p: info.p_attributes, s: info.s_attributes.filter((a) => !info.meta.includes(a)), meta: info.meta };
  for (const view of DECLARED) {
    for (const control of view.controls) {
      if (!control.choose) continue;
      const select = byId(`${view.name}-${control.name}`, HTMLSelectElement);
      const names = kinds[control.choose];
      const keep = names.includes(select.value) ? select.value
        : names.includes(control.default) || control.optional ? control.default : names[0] || "";
      select.replaceChildren(...(control.optional ? [new Option("none", "")] : []),
        ...names.map((name) => new Option(name, name, false, name === keep)));
      select.value = keep;
    }
  }
}

/**
 * The request of a declared analysis: the search's parameters, its controls' values (none left out).
 * @param {Declared} view
 * @param {URLSearchParams} search  the search's parameters
 * @param {Record<string, string>} settings  the controls' values, by id
 * @param {{offset: number} | "file"} what  a page of rows, or the whole table as a file
 */
export function declaredRequest(view, search, settings, what) {
  const params = new URLSearchParams(search);
  for (const control of view.controls) {
    const value = settings[`${view.name}-${control.name}`];
    if (value) params.set(control.name, value);
  }
  if (what === "file") {
    params.set("format", "tsv");
    params.set("provenance", "1");
  } else {
    params.set("offset", String(what.offset));
    params.set("limit", String(DECLARED_ROWS));
  }
  return params;
}

/** @type {Map<string, Promise<PageModule>>} */
const modules = new Map();

/**
 * The page module of a declared analysis (static/analysis-NAME.js), loaded once.
 * @param {string} name
 * @returns {Promise<PageModule>}
 */
export function pageModule(name) {
  let loaded = modules.get(name);
  if (!loaded) {
    loaded = /** @type {Promise<PageModule>} */ (import(`./analysis-${name}.js`));
    modules.set(name, loaded);
  }
  return loaded;
}

/**
 * A page of a declared analysis's answer: its summary, its rows in the table, and the pager.
 * @param {Declared} view
 * @param {DeclaredAnswer} body
 * @param {URLSearchParams} search  the search's parameters (for links to hits)
 */
export async function showDeclared(view, body, search) {
  const shows = await pageModule(view.name);
  byId(`${view.name}-summary`, HTMLElement).textContent = shows.summary(body);
  const table = byId(`${view.name}-table`, HTMLTableElement);
  const rows = body.rows.map((row) => {
    const line = document.createElement("tr");
    for (const column of view.columns) {
      const cell = document.createElement("td");
      cell.append(shows.cell(column, row, body, search));
      line.append(cell);
    }
    return line;
  });
  table.tBodies[0].replaceChildren(...rows);
  table.hidden = rows.length === 0;
  const pager = byId(`${view.name}-pager`, HTMLElement);
  pager.hidden = body.rows_total <= DECLARED_ROWS;
  const range = pager.querySelector(".range");
  if (range) {
    range.textContent = rows.length ? `rows ${number(body.offset + 1)}–${number(body.offset + rows.length)} of ` +
      `${number(body.rows_total)}` : `no rows from ${number(body.offset + 1)} (of ${number(body.rows_total)})`;
  }
  const previous = pager.querySelector(".prev");
  const next = pager.querySelector(".next");
  if (previous instanceof HTMLButtonElement) previous.disabled = body.offset === 0;
  if (next instanceof HTMLButtonElement) next.disabled = body.offset + rows.length >= body.rows_total;
}
