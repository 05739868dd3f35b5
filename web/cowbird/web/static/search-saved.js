// @ts-check
// Saved and shared searches (GET/POST /api/v1/saved, DELETE /api/v1/saved/ID) for a logged-in user:
// Save… keeps the page's URL — query, corpus, filters, view, sort, tab — under a name, listed with
// its share link (/s/ID), which opens it for whoever may read its corpus. Without a login, the
// searches run in this browser are kept in it (localStorage) and listed.

import { ApiProblem, apiUrl, getJson } from "./search-api.js";
import { byId, fromTemplate, part } from "./search-dom.js";

/** @typedef {import("./api-types").SavedSearchOut} Saved  a saved search (GET /api/v1/saved) */

/**
 * A search run in this browser (anonymous users).
 * @typedef {object} LocalSearch
 * @property {string} url
 * @property {string} q
 * @property {string} corpus
 * @property {number} total
 */

const LOCAL_KEY = "cowbird-searches";
const LOCAL_SIZE = 30;

/** The browser session's CSRF token (every page of a logged-in user holds it in its Log out form). */
function csrf() {
  const field = document.querySelector('#logout input[name="csrf"]');
  return field instanceof HTMLInputElement ? field.value : "";
}

/**
 * A change to the user's saved searches: POST or DELETE with the session's CSRF token.
 * @param {string} method
 * @param {string} path
 * @param {object} [body]
 */
export async function change(method, path, body) {
  const answer = await fetch(apiUrl(path), {
    method,
    headers: { "X-CSRF-Token": csrf(), ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!answer.ok) {
    /** @type {import("./search-api.js").Problem} */
    let problem = { status: answer.status, title: `HTTP ${answer.status}` };
    try {
      problem = await answer.json();
    } catch {
      // not JSON: the status says it
    }
    throw new ApiProblem(problem);
  }
  return answer.json();
}

/**
 * The user's items (GET /api/v1/`path`) for the list `listId`; null without a login (the page has no
 * such list) or when they could not be fetched (the list stays as it was).
 * @template T
 * @param {string} path
 * @param {string} listId
 * @returns {Promise<{list: HTMLElement, data: T[]} | null>}
 */
export async function usersItems(path, listId) {
  const list = document.getElementById(listId);
  if (!list) return null;
  try {
    /** @type {{data: T[]}} */
    const answer = await getJson(path, new URLSearchParams());
    return { list, data: answer.data };
  } catch {
    return null;
  }
}

/**
 * A Delete button: DELETE /api/v1/`path`, then `reload` the list; what went wrong shows on the button.
 * @param {HTMLButtonElement} button
 * @param {string} path
 * @param {() => void} reload
 */
export function deletes(button, path, reload) {
  button.addEventListener("click", async () => {
    try {
      await change("DELETE", path);
    } catch (error) {
      button.textContent = error instanceof Error ? error.message : "Not deleted";
      return;
    }
    reload();
  });
}

/**
 * Copies ``text`` to the clipboard and says so in ``status`` (a live region): the Clipboard API, and
 * where a browser lacks it or refuses it (a page on plain HTTP from another host than localhost)
 * a selected text field copied with ``execCommand("copy")``; when both fail, the text is left
 * selected there for Ctrl+C.
 * @param {string} text
 * @param {HTMLElement} status
 */
export async function copyText(text, status) {
  let copied = false;
  try {
    if (navigator.clipboard) {
      await navigator.clipboard.writeText(text);
      copied = true;
    }
  } catch {
    copied = false;
  }
  if (!copied) {
    const field = document.createElement("textarea");
    field.value = text;
    field.readOnly = true;
    field.className = "visually-hidden";
    status.after(field);
    field.select();
    try {
      copied = document.execCommand("copy");
    } catch {
      copied = false;
    }
    if (copied) field.remove();
  }
  status.textContent = copied ? "Copied." : "Press Ctrl+C to copy the selected link.";
}

/**
 * A "Copy link" button's click: the absolute share link to the clipboard.
 * @param {HTMLButtonElement} button
 * @param {string} link  the share link's path (/s/ID)
 * @param {HTMLElement} status
 */
function copies(button, link, status) {
  button.addEventListener("click", () => copyText(`${location.origin}${link}`, status));
}

/** Lists the user's saved searches, each with its share link (and a button copying it) and Delete. */
export async function loadSaved() {
  /** @type {{list: HTMLElement, data: Saved[]} | null} */
  const answer = await usersItems("saved", "saved-list");
  if (!answer) return;
  answer.list.replaceChildren(...answer.data.map((saved) => {
    const item = fromTemplate("saved-item", HTMLLIElement);
    const run = part(item, "a.run", HTMLAnchorElement);
    run.href = saved.url;
    run.textContent = saved.name;
    part(item, ".about", HTMLElement).textContent = `${saved.corpus}, saved ${saved.at.slice(0, 10)}`;
    const categorise = part(item, "a.categorise", HTMLAnchorElement);
    categorise.href = `${saved.url}&categories=${encodeURIComponent(saved.link.split("/").pop() || "")}`;
    categorise.setAttribute("aria-label", `Categorise the lines of ${saved.name}`);
    const share = part(item, "a.share", HTMLAnchorElement);
    share.href = saved.link;
    share.setAttribute("aria-label", `Share link of ${saved.name}`);
    const copy = part(item, "button.copy-link", HTMLButtonElement);
    copy.setAttribute("aria-label", `Copy the share link of ${saved.name}`);
    copies(copy, saved.link, part(item, ".copied", HTMLElement));
    const remove = part(item, "button.delete", HTMLButtonElement);
    remove.setAttribute("aria-label", `Delete ${saved.name}`);
    deletes(remove, `saved/${saved.link.split("/").pop()}`, loadSaved);
    return item;
  }));
  byId("saved-none", HTMLElement).hidden = answer.data.length > 0;
}

/** Save…: a name for the search the page shows (its query by default). */
function openSave() {
  const dialog = byId("save-dialog", HTMLDialogElement);
  const name = byId("save-name", HTMLInputElement);
  const q = new URLSearchParams(location.search).get("q") || "";
  name.value = name.value || q;
  byId("save-said", HTMLElement).textContent = "";
  dialog.showModal();
  name.select();
}

async function save() {
  const said = byId("save-said", HTMLElement);
  const name = byId("save-name", HTMLInputElement).value.trim();
  if (!name) {
    said.textContent = "Give the search a name.";
    return;
  }
  try {
    const saved = /** @type {Saved} */ (await change("POST", "saved", { name, url: `/${location.search}` }));
    said.textContent = `Saved as “${saved.name}”. Share link: ${location.origin}${saved.link} `;
    const copy = document.createElement("button");
    copy.type = "button";
    copy.textContent = "Copy link";
    const status = document.createElement("span");
    status.setAttribute("role", "status");
    said.append(copy, " ", status);
    copies(copy, saved.link, status);
  } catch (error) {
    said.textContent = error instanceof Error ? error.message : String(error);
    return;
  }
  byId("saved", HTMLDetailsElement).open = true;
  loadSaved();
}

/** @returns {LocalSearch[]} */
function localSearches() {
  try {
    const kept = JSON.parse(localStorage.getItem(LOCAL_KEY) || "[]");
    return Array.isArray(kept) ? kept : [];
  } catch {
    return [];
  }
}

/**
 * Keeps a search run without a login in this browser (the newest first, each URL once).
 * @param {LocalSearch} search
 */
export function rememberLocally(search) {
  if (!document.getElementById("local-history-list")) return; // logged in: the account keeps them
  const kept = [search, ...localSearches().filter((s) => s.url !== search.url)].slice(0, LOCAL_SIZE);
  try {
    localStorage.setItem(LOCAL_KEY, JSON.stringify(kept));
  } catch {
    return; // storage full or off: nothing kept
  }
  showLocal();
}

function showLocal() {
  const list = document.getElementById("local-history-list");
  if (!list) return;
  const kept = localSearches();
  list.replaceChildren(...kept.map((search) => {
    const item = fromTemplate("history-item", HTMLLIElement);
    const link = part(item, "a", HTMLAnchorElement);
    link.href = search.url;
    link.textContent = search.q;
    item.append(` — ${search.corpus}: ${search.total.toLocaleString("en")} hits`);
    return item;
  }));
  byId("local-history-clear", HTMLButtonElement).hidden = kept.length === 0;
}

/** Wires Save…, its dialog, the saved list and this browser's list. */
export function setUpSaved() {
  const open = document.getElementById("open-save");
  if (open) {
    open.addEventListener("click", openSave);
    byId("save-go", HTMLButtonElement).addEventListener("click", save);
    byId("save-close", HTMLButtonElement).addEventListener("click", () => byId("save-dialog", HTMLDialogElement).close());
    byId("save-name", HTMLInputElement).addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        save();
      }
    });
    loadSaved();
  }
  const clear = document.getElementById("local-history-clear");
  if (clear) {
    clear.addEventListener("click", () => {
      localStorage.removeItem(LOCAL_KEY);
      showLocal();
    });
    showLocal();
  }
}
