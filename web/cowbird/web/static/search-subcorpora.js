// @ts-check
// Subcorpora: texts chosen by their metadata. Under the filters, the size of what they choose (GET
// /api/v1/subcorpus: tokens and texts, exact over every partition). "Choose texts by their
// metadata…" lists an attribute's values in the texts chosen so far, each with its size, and adds
// the ticked ones as a filter. A logged-in user saves the filters as a named subcorpus (POST
// /api/v1/subcorpora), shared with a group of theirs if they like; "Your subcorpora" lists theirs
// and those shared with them, and "Use" puts one's corpus and filters into the form, so that the
// query, the analyses, the word lists and the downloads all run within it.

import { ApiProblem, aborted, getJson } from "./search-api.js";
import { applySearch, readSearch } from "./search-form.js";
import { byId, corpusInfo, decimal, fromTemplate, number, part } from "./search-dom.js";
import { change, deletes, usersItems } from "./search-saved.js";
import { filterText, parseFilter } from "./search-state.js";

/** @typedef {import("./search-state.js").Filter} Filter */

/** @typedef {import("./api-types").SubcorpusValue} SubcorpusValue  the picker's values= */
/** @typedef {import("./api-types").SubcorpusResult} SubcorpusResult  GET /api/v1/subcorpus's answer */
/** @typedef {import("./api-types").SubcorpusOut} Subcorpus  a saved subcorpus (GET /api/v1/subcorpora) */

const PICKER_LIMIT = 1000;
/** @type {AbortController | null} */
let sizing = null;
/** @type {AbortController | null} */
let picking = null; // the picker's listing in flight: a newer one aborts it
/** @type {number | undefined} */
let sizeTimer;
/** @type {SubcorpusValue[]} */
let listed = [];
let listedAttribute = "";
/** @type {Subcorpus[]} */
let saved = [];

/** @returns {Subcorpus[]} the subcorpora the user sees (theirs and those shared with them), as last listed */
export const savedSubcorpora = () => saved;

/**
 * A value as a regular expression matching exactly it (the characters Python's re.escape escapes).
 * @param {string} value
 */
export const literally = (value) => value.replace(/[()[\]{}?*+\-|^$\\.&~# \t\n\r\v\f]/g, "\\$&");

/**
 * The subcorpus the form's filters choose: its size (and with `values`, that attribute's values).
 * @param {Record<string, string>} [extra]
 * @param {AbortSignal} [signal]
 * @returns {Promise<SubcorpusResult>}
 */
async function subcorpusOfForm(extra = {}, signal) {
  const search = readSearch();
  const params = new URLSearchParams({ corpus: search.corpus, ...extra });
  for (const f of search.filters) params.append("filter", filterText(f));
  return getJson("subcorpus", params, signal);
}

/**
 * "12,345 tokens (12.3 % of the corpus) in 45 of 120 texts"
 * @param {SubcorpusResult} body
 */
function sizeText(body) {
  const share = body.per_cent >= 0.1 || body.per_cent === 0 ? decimal(body.per_cent, 1) : "< 0.1";
  const texts = body.texts === null ? "" // texts: the corpus's <text> regions (say so: they need not be whole pages)
    : ` in ${number(body.texts)}${body.corpus_texts !== null ? ` of ${number(body.corpus_texts)}` : ""} texts (<text> regions)`;
  const partial = body.complete ? "" : ` (partitions ${body.failed.join(", ")} did not answer)`;
  return `${number(body.tokens)} tokens (${share} % of the corpus)${texts}${partial}`;
}

/** The size of what the filters choose, under them (nothing without filters). */
async function showSize() {
  const line = byId("subcorpus-size", HTMLElement);
  sizing?.abort();
  if (readSearch().filters.length === 0) {
    line.textContent = "";
    return;
  }
  const controller = new AbortController();
  sizing = controller;
  try {
    const body = await subcorpusOfForm({}, controller.signal);
    line.textContent = `The filters choose ${sizeText(body)}.`;
  } catch (error) {
    if (aborted(error)) return;
    line.textContent = error instanceof Error ? `The filters' size is not known: ${error.message}` : "";
  } finally {
    if (sizing === controller) sizing = null;
  }
}

/** The size line once the form has been still for a moment. */
export function showSizeLater() {
  clearTimeout(sizeTimer);
  sizeTimer = window.setTimeout(showSize, 400);
}

// ---------------------------------------------------------------- the picker

/**
 * The attribute the picker opens on: one with few values to tick (genre, year …), not one with a
 * value per text (url, id, date).
 * @param {string[]} meta
 */
export function fewValues(meta) {
  const few = /genre|year|type|domain|lang|country|decade|categor|class|medium|register|source/;
  const many = /url|(^|_)id$|host|date|title|name|lastmod|crawl/;
  return meta.find((m) => few.test(m) && !many.test(m)) || meta.find((m) => !many.test(m)) || meta[0] || "";
}

function openPicker() {
  const attribute = byId("picker-attribute", HTMLSelectElement);
  const info = corpusInfo();
  const chosen = info.meta.includes(attribute.value) ? attribute.value : fewValues(info.meta);
  attribute.replaceChildren(...info.meta.map((name) => {
    const option = new Option(name, name, false, name === chosen);
    const described = info.attributes?.[name];
    if (described) option.title = described;
    return option;
  }));
  byId("picker-dialog", HTMLDialogElement).showModal();
  attribute.focus();
  if (chosen) listValues();
}

async function listValues() {
  const status = byId("picker-status", HTMLElement);
  const table = byId("picker-table", HTMLTableElement);
  const attribute = byId("picker-attribute", HTMLSelectElement).value;
  const contains = byId("picker-contains", HTMLInputElement).value;
  /** @type {Record<string, string>} */
  const extra = { values: attribute, order: byId("picker-order", HTMLSelectElement).value, limit: String(PICKER_LIMIT) };
  if (contains) Object.assign(extra, { match: `.*${literally(contains)}.*`, ignore_case: "true" });
  status.textContent = `Listing the values of ${attribute}…`;
  picking?.abort();
  const controller = new AbortController();
  picking = controller;
  /** @type {SubcorpusResult} */
  let body;
  try {
    body = await subcorpusOfForm(extra, controller.signal);
  } catch (error) {
    if (aborted(error)) return; // a newer listing took its place
    status.textContent = error instanceof ApiProblem || error instanceof Error ? error.message : String(error);
    table.hidden = true;
    return;
  } finally {
    if (picking === controller) picking = null;
  }
  listed = body.values;
  listedAttribute = attribute;
  const within = body.filters.length ? "the texts the filters choose" : "the corpus";
  const more = body.values_total > body.values.length
    ? ` The first ${number(body.values.length)} are listed: narrow them down with “containing”.` : "";
  status.textContent = `${number(body.values_total)} values of ${attribute}${contains ? ` containing “${contains}”` : ""} `
    + `in ${within}: ${sizeText(body)}.${more}`;
  const tbody = part(table, "tbody", HTMLTableSectionElement);
  tbody.replaceChildren(...body.values.map((value, k) => {
    const row = fromTemplate("picker-row", HTMLTableRowElement);
    const cells = row.cells;
    const box = part(row, "input", HTMLInputElement);
    box.value = String(k);
    box.setAttribute("aria-label", `Use ${value.value || "the empty value"}`);
    cells[1].textContent = value.value || "(empty)";
    cells[2].textContent = number(value.tokens);
    cells[3].textContent = number(value.texts);
    cells[4].textContent = `${decimal(value.per_cent, 1)} %`;
    return row;
  }));
  table.hidden = body.values.length === 0;
  showTicked();
}

/** @returns {SubcorpusValue[]} the values ticked */
function ticked() {
  return [...document.querySelectorAll("#picker-table tbody input:checked")]
    .map((box) => listed[Number(/** @type {HTMLInputElement} */ (box).value)])
    .filter((value) => value !== undefined);
}

function showTicked() {
  const values = ticked();
  const tokens = values.reduce((sum, v) => sum + v.tokens, 0);
  const texts = values.reduce((sum, v) => sum + v.texts, 0);
  byId("picker-chosen", HTMLElement).textContent = values.length
    ? `${number(values.length)} ticked: ${number(tokens)} tokens in ${number(texts)} texts.` : "";
  byId("picker-use", HTMLButtonElement).disabled = values.length === 0;
}

/** The ticked values as a filter of the form: the texts with any of them (or, negated, none of them). */
function useTicked() {
  const values = ticked();
  if (!values.length) return;
  const parts = values.map((v) => literally(v.value));
  const regex = parts.length === 1 && parts[0] !== "" ? parts[0] : `(${parts.join("|")})`;
  const search = readSearch();
  const negated = byId("picker-negate", HTMLInputElement).checked;
  applySearch({ ...search, filters: [...search.filters, { attribute: listedAttribute, negated, regex }] });
  byId("picker-dialog", HTMLDialogElement).close();
  formEdited();
  byId("open-picker", HTMLButtonElement).focus();
}

/** Tells the page the form changed (its CQP line, estimate and size follow). */
function formEdited() {
  byId("search", HTMLFormElement).dispatchEvent(new Event("change", { bubbles: true }));
}

// ---------------------------------------------------------------- saved subcorpora

function openSaveSubcorpus() {
  const search = readSearch();
  const said = byId("subcorpus-said", HTMLElement);
  said.textContent = "";
  byId("subcorpus-what", HTMLElement).textContent = search.filters.length
    ? `The texts of ${search.corpus} that the filters choose: ${search.filters.map(filterText).join("; ")}.`
    : "";
  byId("subcorpus-go", HTMLButtonElement).disabled = search.filters.length === 0;
  if (!search.filters.length) said.textContent = "Choose texts with a filter first: a subcorpus is what the filters choose.";
  byId("subcorpus-dialog", HTMLDialogElement).showModal();
  byId("subcorpus-name", HTMLInputElement).select();
}

async function saveSubcorpus() {
  const said = byId("subcorpus-said", HTMLElement);
  const name = byId("subcorpus-name", HTMLInputElement).value.trim();
  const search = readSearch();
  if (!name) {
    said.textContent = "Give the subcorpus a name.";
    return;
  }
  const group = byId("subcorpus-group", HTMLSelectElement).value || null;
  said.textContent = "Counting its tokens and texts…";
  try {
    const saved = /** @type {Subcorpus} */ (await change("POST", "subcorpora", {
      name, corpus: search.corpus, filters: search.filters.map(filterText), group }));
    said.textContent = `Saved “${saved.name}”: ${number(saved.tokens)} tokens`
      + `${saved.texts !== null ? ` in ${number(saved.texts)} texts` : ""}`
      + `${saved.group ? `, shared with the group ${saved.group}` : ""}.`;
  } catch (error) {
    said.textContent = error instanceof Error ? error.message : String(error);
    return;
  }
  byId("subcorpora", HTMLDetailsElement).open = true;
  loadSubcorpora();
}

/** Lists the user's subcorpora and those shared with them, each with Use (and Delete, if theirs). */
export async function loadSubcorpora() {
  /** @type {{list: HTMLElement, data: Subcorpus[]} | null} */
  const answer = await usersItems("subcorpora", "subcorpora-list");
  if (!answer) return;
  saved = answer.data;
  document.dispatchEvent(new Event("cowbird:subcorpora"));
  answer.list.replaceChildren(...answer.data.map((subcorpus) => {
    const item = fromTemplate("subcorpus-item", HTMLLIElement);
    part(item, ".name", HTMLElement).textContent = subcorpus.name;
    const whose = subcorpus.mine ? (subcorpus.group ? `shared with the group ${subcorpus.group}` : "only you see it")
      : `${subcorpus.owner}'s, shared with the group ${subcorpus.group}`;
    part(item, ".about", HTMLElement).textContent = `${subcorpus.corpus}: ${number(subcorpus.tokens)} tokens`
      + `${subcorpus.texts !== null ? ` in ${number(subcorpus.texts)} texts` : ""} (${subcorpus.filters.join("; ")}); `
      + `${whose}.`;
    const use = part(item, "button.use", HTMLButtonElement);
    use.setAttribute("aria-label", `Use ${subcorpus.name}: its corpus and filters`);
    use.addEventListener("click", () => {
      const filters = /** @type {Filter[]} */ (subcorpus.filters.map(parseFilter).filter((f) => f !== null));
      applySearch({ ...readSearch(), corpus: subcorpus.corpus, filters });
      formEdited();
      byId("subcorpus-size", HTMLElement).scrollIntoView({ block: "nearest" });
      byId("q", HTMLInputElement).focus();
    });
    const link = part(item, "a.search", HTMLAnchorElement);
    link.href = subcorpus.search;
    link.setAttribute("aria-label", `The search page within ${subcorpus.name}`);
    const remove = part(item, "button.delete", HTMLButtonElement);
    remove.hidden = !subcorpus.mine;
    remove.setAttribute("aria-label", `Delete ${subcorpus.name}`);
    deletes(remove, `subcorpora/${encodeURIComponent(subcorpus.id)}`, loadSubcorpora);
    return item;
  }));
  byId("subcorpora-none", HTMLElement).hidden = answer.data.length > 0;
}

/** Wires the size line, the picker, Save as a subcorpus… and the list of subcorpora. */
export function setUpSubcorpora() {
  const form = byId("search", HTMLFormElement);
  form.addEventListener("input", showSizeLater);
  form.addEventListener("change", showSizeLater);
  byId("filter-rows", HTMLElement).addEventListener("click", (event) => {
    if (event.target instanceof Element && event.target.closest("button.remove")) showSizeLater();
  });
  byId("open-picker", HTMLButtonElement).addEventListener("click", openPicker);
  byId("picker-list", HTMLButtonElement).addEventListener("click", listValues);
  byId("picker-attribute", HTMLSelectElement).addEventListener("change", listValues);
  byId("picker-order", HTMLSelectElement).addEventListener("change", listValues);
  byId("picker-contains", HTMLInputElement).addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      listValues();
    }
  });
  byId("picker-table", HTMLTableElement).addEventListener("change", showTicked);
  byId("picker-use", HTMLButtonElement).addEventListener("click", useTicked);
  byId("picker-close", HTMLButtonElement).addEventListener("click", () => byId("picker-dialog", HTMLDialogElement).close());
  const open = document.getElementById("open-save-subcorpus");
  if (open) {
    open.addEventListener("click", openSaveSubcorpus);
    byId("subcorpus-go", HTMLButtonElement).addEventListener("click", saveSubcorpus);
    byId("subcorpus-close", HTMLButtonElement).addEventListener("click",
      () => byId("subcorpus-dialog", HTMLDialogElement).close());
    byId("subcorpus-name", HTMLInputElement).addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        saveSubcorpus();
      }
    });
    loadSubcorpora();
  }
  showSizeLater(); // the filters the page opened with
}
