// @ts-check
// Categorising concordance lines (CQPweb's categorised queries): opened from a saved search
// (categories=ID in the URL), each line gets a category 1-9 — its select, or the keys 1-9 on the
// line (0 takes it away) — kept in the account by the hit's global positions, so they come back on
// any page, order or reload. The bar counts the lines per category, names the categories, and
// downloads the concordance with them as a column (in the page's order), or the categorised lines only.

import { ApiProblem, apiUrl, getJson } from "./search-api.js";
import { byId, number, part } from "./search-dom.js";
import { change } from "./search-saved.js";
import { fromUrl, searchParams, selectHits, state } from "./search-state.js";

/** @typedef {import("./api-types").LineCategories} LineCategories */

/** @type {LineCategories | null} */
let loaded = null;
/** @type {Map<string, number>} */
const byLine = new Map();

/** @param {number} position @param {number} matchend */
const lineKey = (position, matchend) => `${position}:${matchend}`;

/** @returns {import("./search-state.js").Search | null} the saved search being categorised, once loaded */
export function searchOfSaved() {
  if (!loaded || !state.categories) return null;
  return fromUrl(new URLSearchParams(loaded.url.replace(/^\/\?/, ""))).search;
}

/** @param {LineCategories} answer */
function take(answer) {
  loaded = answer;
  byLine.clear();
  for (const line of answer.lines) byLine.set(lineKey(line.position, line.matchend), line.category);
}

/** @param {number} k 1-9 */
function label(k) {
  const name = loaded?.labels[k - 1] || "";
  return name ? `${k} ${name}` : String(k);
}

function showBar() {
  const bar = byId("categories-bar", HTMLElement);
  bar.hidden = !state.categories || !loaded;
  if (!loaded || !state.categories) return;
  byId("cat-about", HTMLElement).textContent =
    `Categorising the lines of “${loaded.name}”: choose a category, or press 1–9 on a line (0 takes it away).`;
  const counts = loaded.counts.map((n, i) => (n ? `${label(i + 1)}: ${n}` : "")).filter(Boolean);
  byId("cat-counts", HTMLElement).textContent = counts.length ? `Lines: ${counts.join(" · ")}.` : "No line has a category yet.";
  const labels = byId("cat-labels", HTMLInputElement);
  if (document.activeElement !== labels) labels.value = loaded.labels.filter(Boolean).length ? loaded.labels.join(", ").replace(/(, )+$/, "") : "";
  const shown = state.shown;
  if (shown) {
    // the lines as the page shows them: its order (or its sample), up to the browser's limit
    const limit = Number(byId("download", HTMLDialogElement).dataset.browserLimit) || 10_000;
    const params = searchParams(shown.search);
    selectHits(params, shown.sample, shown.order);
    params.set("categories", state.categories);
    if (!shown.sample) params.set("limit", String(Math.max(1, Math.min(shown.total, limit))));
    params.set("provenance", "1");
    byId("cat-download", HTMLAnchorElement).href = `${apiUrl("export")}?${params}`;
    // every categorised line, in the page's order, however deep among the hits
    const only = searchParams(shown.search);
    selectHits(only, null, shown.order);
    only.set("categories", state.categories);
    only.set("only_categorised", "1");
    only.set("provenance", "1");
    byId("cat-only", HTMLAnchorElement).href = `${apiUrl("export")}?${only}`;
    const note = byId("cat-note", HTMLElement);
    const cut = !shown.sample && shown.total > limit;
    note.hidden = !cut;
    note.textContent = cut
      ? `The concordance download holds the first ${number(limit)} of the ${number(shown.total)} lines in the page's order: ` +
        "categorised lines after them are not in it. Download the categorised lines only, or every line in parts " +
        "through the API (offset= and limit= with categories=; see the API help)."
      : "";
  }
  const without = new URLSearchParams(location.search);
  without.delete("categories");
  byId("cat-stop", HTMLAnchorElement).href = `/?${without}`;
}

/** The rows' selects, from the categories held (after a page of hits is drawn, or categories change). */
function fillRows() {
  for (const select of document.querySelectorAll("#kwic select.category")) {
    if (!(select instanceof HTMLSelectElement)) continue;
    const value = byLine.get(select.dataset.line || "") || 0;
    [...select.options].forEach((option, k) => {
      option.textContent = k === 0 ? "–" : label(k);
    });
    select.value = String(value);
  }
}

/**
 * Gives each line of the concordance its category select (in categorising mode).
 * @param {Pick<import("./search-kwic.js").Hit, "position" | "matchend" | "left" | "match" | "right">[]} hits  the page's
 *   hits, in the order of its rows
 */
export function categoriseRows(hits) {
  if (!state.categories) {
    byId("categories-bar", HTMLElement).hidden = true;
    return;
  }
  const rows = [...document.querySelectorAll("#kwic tbody tr:not(.wide)")];
  rows.forEach((row, i) => {
    const hit = hits[i];
    if (!hit || !(row instanceof HTMLTableRowElement)) return;
    const select = document.createElement("select");
    select.className = "category";
    select.dataset.line = lineKey(hit.position, hit.matchend);
    select.setAttribute("aria-label", `Category of hit ${i + 1}`);
    for (let k = 0; k <= 9; k += 1) select.append(new Option(k === 0 ? "–" : label(k), String(k)));
    select.addEventListener("change", () => setCategory(hit.position, hit.matchend, Number(select.value), select));
    part(row, "td.tools", HTMLTableCellElement).prepend(select);
    // the row itself takes the keys: Tab or ↑/↓ to a line, 1-9 to categorise it
    row.tabIndex = 0;
    row.classList.add("categorisable");
    row.setAttribute("aria-label", `Hit ${i + 1}: ${hit.left} ${hit.match} ${hit.right} — press 1 to 9 for its category, 0 for none`);
  });
  fillRows();
  showBar();
  if (!loaded) loadCategories();
}

async function loadCategories() {
  if (!state.categories) return;
  try {
    take(/** @type {LineCategories} */ (await getJson(`saved/${encodeURIComponent(state.categories)}/categories`,
      new URLSearchParams())));
  } catch (error) {
    byId("categories-bar", HTMLElement).hidden = false;
    byId("cat-about", HTMLElement).textContent =
      `The categories cannot be shown: ${error instanceof ApiProblem ? error.message : String(error)}`;
    return;
  }
  fillRows();
  showBar();
}

/**
 * @param {number} position
 * @param {number} matchend
 * @param {number} category  0 takes it away
 * @param {HTMLSelectElement} select
 */
async function setCategory(position, matchend, category, select) {
  if (!state.categories) return;
  select.value = String(category);
  try {
    take(/** @type {LineCategories} */ (await change("POST", `saved/${encodeURIComponent(state.categories)}/categories`,
      { position, matchend, category })));
  } catch (error) {
    byId("cat-counts", HTMLElement).textContent = `Not kept: ${error instanceof Error ? error.message : String(error)}`;
    return;
  }
  fillRows();
  showBar();
}

/** Wires the keys 1-9 and 0 on a line, the names of the categories. */
export function setUpCategories() {
  part(document, "#kwic tbody", HTMLTableSectionElement).addEventListener("keydown", (event) => {
    if (state.categories && (event.key === "ArrowDown" || event.key === "ArrowUp")
        && event.target instanceof HTMLTableRowElement) { // from line to line
      const rows = [...document.querySelectorAll("#kwic tbody tr.categorisable")];
      const next = rows[rows.indexOf(event.target) + (event.key === "ArrowDown" ? 1 : -1)];
      if (next instanceof HTMLElement) {
        event.preventDefault();
        next.focus();
      }
      return;
    }
    if (!state.categories || !/^[0-9]$/.test(event.key) || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (!(target instanceof HTMLElement) || target instanceof HTMLSelectElement || target instanceof HTMLInputElement) {
      return; // a select takes its own keys
    }
    const row = target.closest("tr");
    const select = row?.querySelector("select.category");
    if (!(select instanceof HTMLSelectElement)) return;
    event.preventDefault();
    const [position, matchend] = (select.dataset.line || "").split(":").map(Number);
    setCategory(position, matchend, Number(event.key), select);
  });
  byId("cat-labels", HTMLInputElement).addEventListener("change", async (event) => {
    if (!state.categories || !(event.target instanceof HTMLInputElement)) return;
    const labels = event.target.value.split(",").map((name) => name.trim()).slice(0, 9);
    try {
      take(/** @type {LineCategories} */ (await change("POST", `saved/${encodeURIComponent(state.categories)}/labels`,
        { labels })));
    } catch (error) {
      byId("cat-counts", HTMLElement).textContent = `Not kept: ${error instanceof Error ? error.message : String(error)}`;
      return;
    }
    fillRows();
    showBar();
  });
}
