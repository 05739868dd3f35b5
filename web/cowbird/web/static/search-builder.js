// @ts-check
// The query builder: token boxes (attribute, operator, value, case; how often; the region the match
// stays in) for people who know no CQP. The server writes the boxes as canonical CQP
// (/api/v1/builder?boxes=…), which goes into the query field; a query typed there is read back into
// the boxes (/api/v1/builder?q=…) where they can show it, else the status says why not and the
// boxes stay as they were. No CQP is parsed or written here: the server's grammar does both.
// A test's value field offers the attribute's values (Korp's tag-value list), from the corpus's
// lexicon by GET /api/v1/wordlist: all of them, the most frequent first, for an attribute with at
// most VALUES_LISTED (pos, upos ...); for one with more (word, lemma), as it is typed, the most
// frequent values starting with what is typed (SUGGESTIONS of them).

import { ApiProblem, aborted, begin, end, getJson, problemText } from "./search-api.js";
import { byId, corpusInfo, fromTemplate, part } from "./search-dom.js";

// The boxes as /api/v1/builder takes them (boxes=, JSON) and reads a query back into them; its answer.
/** @typedef {import("./api-types").BoxTest} BoxTest */
/** @typedef {import("./api-types").QueryBox} QueryBox */
/** @typedef {import("./api-types").QueryBoxes} QueryBoxes */
/** @typedef {import("./api-types").BuilderResult} BuilderResult */

/** Tokens the boxes hold at most (the server's limit). */
const MAX_TOKENS = 30;
const REPEATS = ["1,1", "0,1", "1,", "0,"];

/** Values of an attribute the value field lists whole at most; with more, it suggests as it is typed. */
const VALUES_LISTED = 1000;
/** @returns {number} VALUES_LISTED, or the number the builder's data-values-listed says (a smaller page, a test) */
const valuesListed = () => Number(byId("builder", HTMLDetailsElement).dataset.valuesListed) || VALUES_LISTED;
/** Values suggested at a time for an attribute with more than VALUES_LISTED. */
const SUGGESTIONS = 30;
/** @type {Map<string, Promise<{values: string[], more: boolean}>>} each corpus's attribute's values, asked once */
const valuesKept = new Map();
/** @type {WeakMap<Element, AbortController>} the suggestions each value field waits for */
const suggesting = new WeakMap();
let valueLists = 0;

/** @type {{written: (cqp: string) => void}} */
const hooks = { written: () => {} };
/** The boxes last written or read (JSON): a change event that changes nothing (leaving a field) writes nothing. */
let lastBoxes = "";

/** @returns {HTMLOListElement} */
const tokens = () => byId("builder-tokens", HTMLOListElement);

/**
 * A test row, filled.
 * @param {BoxTest} test
 */
function testRow(test) {
  const row = fromTemplate("builder-test", HTMLDivElement);
  const attribute = part(row, "select.attribute", HTMLSelectElement);
  const names = corpusInfo().p_attributes;
  attribute.replaceChildren(...[...new Set([...names, test.attribute])].filter(Boolean).map((n) => new Option(n, n)));
  attribute.value = test.attribute || names[0] || "word";
  part(row, "select.operator", HTMLSelectElement).value = test.operator;
  part(row, "input.value", HTMLInputElement).value = test.value;
  part(row, "input.case", HTMLInputElement).checked = test.ignore_case;
  const field = part(row, "input.value", HTMLInputElement);
  const list = document.createElement("datalist");
  list.id = `builder-values-${++valueLists}`;
  field.setAttribute("list", list.id);
  field.after(list);
  attribute.addEventListener("change", () => void offerValues(row));
  field.addEventListener("input", () => void suggest(row));
  void offerValues(row);
  part(row, "button.remove-test", HTMLButtonElement).addEventListener("click", () => {
    const box = row.closest("li");
    row.remove();
    numberTokens();
    changed();
    if (box) part(box, "button.add-test", HTMLButtonElement).focus();
  });
  return row;
}

/**
 * The values of a corpus's p-attribute, the most frequent first (at most VALUES_LISTED; `more`: it has more).
 * @param {string} corpus
 * @param {string} attribute
 * @returns {Promise<{values: string[], more: boolean}>}
 */
function attributeValues(corpus, attribute) {
  const limit = valuesListed();
  const key = `${corpus}\u0000${attribute}\u0000${limit}`;
  let found = valuesKept.get(key);
  if (!found) {
    const params = new URLSearchParams({ corpus, attribute, limit: String(limit) });
    found = getJson("wordlist", params).then((body) => {
      const listed = /** @type {import("./api-types").WordListResult} */ (body);
      return { values: listed.rows.map((r) => r.value), more: listed.more };
    });
    found.catch(() => valuesKept.delete(key)); // asked again next time
    valuesKept.set(key, found);
  }
  return found;
}

/**
 * A value as a regular expression matching exactly it.
 * @param {string} value
 */
const literal = (value) => value.replace(/[\\.^$|?*+()[\]{}]/g, "\\$&");

/**
 * @param {HTMLDataListElement} list
 * @param {string[]} values
 */
function listValues(list, values) {
  list.replaceChildren(...values.map((v) => new Option(v, v)));
}

/**
 * Offers a test row's attribute's values in its value field: the list of all of them, or (with more
 * than VALUES_LISTED) suggestions as the field is typed in; its title says which.
 * @param {HTMLDivElement} row
 */
async function offerValues(row) {
  const attribute = part(row, "select.attribute", HTMLSelectElement).value;
  const field = part(row, "input.value", HTMLInputElement);
  const list = part(row, "datalist", HTMLDataListElement);
  list.replaceChildren();
  delete row.dataset.values;
  if (!attribute) return;
  try {
    const { values, more } = await attributeValues(corpusInfo().name, attribute);
    if (part(row, "select.attribute", HTMLSelectElement).value !== attribute) return; // changed meanwhile
    row.dataset.values = more ? "many" : "all";
    field.title = more
      ? `${attribute} has more than ${valuesListed().toLocaleString("en")} values: type its first letters for suggestions`
      : `${attribute}: ${values.length.toLocaleString("en")} values in this corpus, the most frequent first — pick one, or type`;
    if (more) await suggest(row);
    else listValues(list, values);
  } catch {
    field.title = ""; // no list: the field takes what is typed, as always
  }
}

/**
 * An attribute with many values: the most frequent ones starting with what the value field holds
 * (ignoring case), in its list.
 * @param {HTMLDivElement} row
 */
async function suggest(row) {
  if (row.dataset.values !== "many") return;
  suggesting.get(row)?.abort();
  const list = part(row, "datalist", HTMLDataListElement);
  const typed = part(row, "input.value", HTMLInputElement).value;
  if (!typed) {
    list.replaceChildren();
    return;
  }
  const controller = new AbortController();
  suggesting.set(row, controller);
  const attribute = part(row, "select.attribute", HTMLSelectElement).value;
  const params = new URLSearchParams({ corpus: corpusInfo().name, attribute, match: `${literal(typed)}.*`,
    ignore_case: "true", limit: String(SUGGESTIONS) });
  try {
    const body = /** @type {import("./api-types").WordListResult} */ (await getJson("wordlist", params, controller.signal));
    listValues(list, body.rows.map((r) => r.value));
  } catch (error) {
    if (!aborted(error)) list.replaceChildren();
  }
}

/**
 * A token box, filled.
 * @param {QueryBox} box
 */
function tokenBox(box) {
  const item = fromTemplate("builder-token", HTMLLIElement);
  const tests = part(item, ".builder-tests", HTMLDivElement);
  tests.replaceChildren(...box.tests.map(testRow));
  const repeat = part(item, "select.repeat", HTMLSelectElement);
  const key = `${box.min},${box.max ?? ""}`;
  repeat.value = REPEATS.includes(key) ? key : "range";
  part(item, "input.min", HTMLInputElement).value = String(box.min);
  part(item, "input.max", HTMLInputElement).value = box.max === null ? "" : String(box.max);
  part(item, ".range", HTMLElement).hidden = repeat.value !== "range";
  repeat.addEventListener("change", () => {
    part(item, ".range", HTMLElement).hidden = repeat.value !== "range";
  });
  part(item, "button.add-test", HTMLButtonElement).addEventListener("click", () => {
    const row = testRow({ attribute: corpusInfo().p_attributes[0] || "word", operator: "is", value: "", ignore_case: false });
    tests.append(row);
    numberTokens();
    part(row, "input.value", HTMLInputElement).focus();
  });
  part(item, "button.remove-token", HTMLButtonElement).addEventListener("click", () => {
    const next = item.nextElementSibling || item.previousElementSibling;
    item.remove();
    numberTokens();
    changed();
    (next ? part(next, "button.remove-token", HTMLButtonElement) : byId("builder-add", HTMLButtonElement)).focus();
  });
  return item;
}

/** Each token's legend says its place, and what an empty one matches. */
function numberTokens() {
  [...tokens().children].forEach((item, i) => {
    const empty = item.querySelectorAll(".builder-test").length === 0;
    part(item, "legend", HTMLLegendElement).textContent = `Token ${i + 1}${empty ? " (any token)" : ""}`;
  });
  byId("builder-add", HTMLButtonElement).disabled = tokens().children.length >= MAX_TOKENS;
}

/** @returns {QueryBoxes} the boxes as the controls have them */
function readBoxes() {
  return {
    tokens: [...tokens().children].map((item) => {
      const repeat = part(item, "select.repeat", HTMLSelectElement).value;
      const [low, high] = repeat === "range"
        ? [part(item, "input.min", HTMLInputElement).value, part(item, "input.max", HTMLInputElement).value]
        : repeat.split(",");
      return {
        tests: [...item.querySelectorAll(".builder-test")].map((row) => ({
          attribute: part(row, "select.attribute", HTMLSelectElement).value,
          // the select's options are the server's operators (templates/search.html, #builder-test)
          operator: /** @type {BoxTest["operator"]} */ (part(row, "select.operator", HTMLSelectElement).value),
          value: part(row, "input.value", HTMLInputElement).value,
          ignore_case: part(row, "input.case", HTMLInputElement).checked,
        })),
        min: Number.parseInt(low || "0", 10) || 0,
        max: high === "" || high === undefined ? null : Number.parseInt(high, 10),
      };
    }),
    within: byId("builder-within", HTMLSelectElement).value || null,
  };
}

/**
 * Shows these boxes (read from a query).
 * @param {QueryBoxes} boxes
 */
function showBoxes(boxes) {
  tokens().replaceChildren(...boxes.tokens.map(tokenBox));
  const within = byId("builder-within", HTMLSelectElement);
  if (boxes.within && ![...within.options].some((o) => o.value === boxes.within)) within.append(new Option(boxes.within, boxes.within));
  within.value = boxes.within ?? "";
  numberTokens();
  lastBoxes = JSON.stringify(readBoxes());
}

/** @param {string} text */
function say(text) {
  byId("builder-status", HTMLElement).textContent = text;
}

/** The boxes changed: the server writes their CQP, which goes into the query field. */
async function changed() {
  const boxes = readBoxes();
  if (!boxes.tokens.length) {
    say("Add a token to build a query.");
    return;
  }
  const json = JSON.stringify(boxes);
  if (json === lastBoxes) return; // as written (or read) already: the query field stays as it is
  lastBoxes = json;
  const signal = begin("builder");
  try {
    /** @type {BuilderResult} */
    const body = await getJson("builder", new URLSearchParams({ boxes: json, corpus: corpusInfo().name }), signal);
    say(`CQP: ${body.cqp}`);
    hooks.written(body.cqp);
  } catch (error) {
    lastBoxes = ""; // not written: the next change tries again
    if (aborted(error)) return;
    say(error instanceof ApiProblem ? problemText(error.problem, "the boxes cannot be written") : "The boxes cannot be written.");
  } finally {
    end("builder", signal);
  }
}

/**
 * The query typed in the form, read back into the boxes where they can show it.
 * @param {string} q
 * @param {string} syntax
 */
export async function readQuery(q, syntax) {
  if (!byId("builder", HTMLDetailsElement).open || !q.trim()) return;
  const signal = begin("builder");
  try {
    /** @type {BuilderResult} */
    const body = await getJson("builder", new URLSearchParams({ q, syntax }), signal);
    if (body.fits && body.boxes) {
      showBoxes(body.boxes);
      say(`CQP: ${body.cqp}`);
    } else say(`The boxes cannot show this query — ${body.reason ?? ""}; its CQP stays as written: ${body.cqp}`);
  } catch (error) {
    if (aborted(error)) return;
    say(error instanceof ApiProblem ? `The query has an error: ${problemText(error.problem)}` : "");
  } finally {
    end("builder", signal);
  }
}

/** The regions the match may stay within: the corpus's s-attributes without values (s, p, text …). */
export function describeBuilder() {
  const info = corpusInfo();
  const within = byId("builder-within", HTMLSelectElement);
  const kept = within.value;
  const regions = info.s_attributes.filter((a) => !info.meta.includes(a));
  within.replaceChildren(new Option("no region", ""), ...regions.map((r) => new Option(r, r)));
  within.value = regions.includes(kept) ? kept : "";
  for (const select of tokens().querySelectorAll("select.attribute")) {
    if (!(select instanceof HTMLSelectElement)) continue;
    const chosen = select.value;
    select.replaceChildren(...info.p_attributes.map((n) => new Option(n, n)));
    select.value = info.p_attributes.includes(chosen) ? chosen : info.p_attributes[0] || "";
  }
}

/**
 * Wires the builder: `written` is told each CQP the boxes make (the page puts it in the query field).
 * @param {{written: (cqp: string) => void, current: () => {q: string, syntax: string}}} page
 */
export function setUpBuilder(page) {
  hooks.written = page.written;
  const details = byId("builder", HTMLDetailsElement);
  let timer = 0;
  const later = () => {
    clearTimeout(timer);
    timer = window.setTimeout(changed, 250);
  };
  details.addEventListener("input", later);
  details.addEventListener("change", later);
  byId("builder-add", HTMLButtonElement).addEventListener("click", () => {
    const item = tokenBox({ tests: [{ attribute: corpusInfo().p_attributes[0] || "word", operator: "is", value: "", ignore_case: false }], min: 1, max: 1 });
    tokens().append(item);
    numberTokens();
    part(item, "input.value", HTMLInputElement).focus();
  });
  details.addEventListener("toggle", () => {
    if (!details.open) return;
    describeBuilder();
    const { q, syntax } = page.current();
    if (q.trim()) void readQuery(q, syntax); // the query in the field, in boxes
    else if (!tokens().children.length) byId("builder-add", HTMLButtonElement).click();
  });
}
