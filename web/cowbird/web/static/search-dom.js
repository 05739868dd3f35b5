// @ts-check
// The search page's small DOM helpers: typed look-ups, rows cloned from the page's <template>s, the
// corpora of the JSON island, and number formats. Nothing here changes after the page has loaded.

/**
 * A corpus as the page's JSON island describes it: /api/v1/corpora's, without its partitions
 * (frontend_api/cowbird/frontend/routes/pages.py).
 * @typedef {Omit<import("./api-types").CorpusSummary, "partitions">} Corpus
 */

/**
 * The element with this id, checked to be of this type (a missing or different one is a bug of the page).
 * @template {Element} T
 * @param {string} id
 * @param {new (...args: any[]) => T} type
 * @returns {T}
 */
export function byId(id, type) {
  const element = document.getElementById(id);
  if (!(element instanceof type)) throw new Error(`#${id} is not a ${type.name}`);
  return element;
}

/**
 * The first element under `root` that matches `selector`, checked to be of this type.
 * @template {Element} T
 * @param {ParentNode} root
 * @param {string} selector
 * @param {new (...args: any[]) => T} type
 * @returns {T}
 */
export function part(root, selector, type) {
  const element = root.querySelector(selector);
  if (!(element instanceof type)) throw new Error(`${selector} is not a ${type.name}`);
  return element;
}

/**
 * A copy of the one element a <template> of the page holds (a table row, a filter, ...).
 * @template {Element} T
 * @param {string} id  the template's id
 * @param {new (...args: any[]) => T} type
 * @returns {T}
 */
export function fromTemplate(id, type) {
  const element = byId(id, HTMLTemplateElement).content.firstElementChild?.cloneNode(true);
  if (!(element instanceof type)) throw new Error(`template #${id} does not hold a ${type.name}`);
  return element;
}

/**
 * A form control whose value is a setting: a checkbox's is "1" or "", any other's its value.
 * @param {string} id
 * @returns {string}
 */
export function controlValue(id) {
  const element = control(id);
  return element instanceof HTMLInputElement && element.type === "checkbox" ? (element.checked ? "1" : "") : element.value;
}

/**
 * Sets a control from a setting's text; a select keeps its value when it has no such option.
 * @param {string} id
 * @param {string} text
 */
export function setControlValue(id, text) {
  const element = control(id);
  if (element instanceof HTMLInputElement && element.type === "checkbox") element.checked = text === "1";
  else if (!(element instanceof HTMLSelectElement) || [...element.options].some((o) => o.value === text)) element.value = text;
}

/**
 * @param {string} id
 * @returns {HTMLInputElement | HTMLSelectElement}
 */
function control(id) {
  const element = document.getElementById(id);
  if (element instanceof HTMLInputElement || element instanceof HTMLSelectElement) return element;
  throw new Error(`#${id} is not a form control`);
}

/** The corpora open to the viewer, from the page's JSON island (read once, never changed). */
export const CORPORA = /** @type {Corpus[]} */ (JSON.parse(byId("corpus-data", HTMLScriptElement).textContent || "[]"));

/**
 * The corpus chosen in the form (the first one if the choice is not a corpus of the page).
 * @returns {Corpus}
 */
export function corpusInfo() {
  const name = byId("corpus", HTMLSelectElement).value;
  return CORPORA.find((c) => c.name === name) || CORPORA[0];
}

/** @param {number} n */
export const number = (n) => n.toLocaleString("en");

/**
 * @param {number} n
 * @param {number} [digits]
 */
export const decimal = (n, digits = 2) =>
  n.toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits });
