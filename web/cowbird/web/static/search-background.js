// @ts-check
// Searches that run in the background: a query the server estimated heavy (or a sorted page deep in
// the hits) says so at once; the page then lists it under "Running in the background" and stays
// usable — a newer search on the page no longer cancels it. When it ends, its line says how many
// hits it found, with a link that opens its page (the nodes keep its result, so that is quick).

import { byId } from "./search-dom.js";

/**
 * One background search on the page: its line, and the controller that can stop it.
 * @typedef {object} BackgroundSearch
 * @property {HTMLLIElement} item
 * @property {AbortController} controller
 */

/**
 * Lists a search that now runs in the background.
 * @param {string} query  the query as the user wrote it
 * @param {string} message  what the server said (why it runs in the background)
 * @param {AbortController} controller  the search's request, which "Stop" aborts
 * @returns {BackgroundSearch}
 */
export function showBackground(query, message, controller) {
  const list = byId("background-searches", HTMLUListElement);
  const item = document.createElement("li");
  item.dataset.state = "running";
  const what = document.createElement("q");
  what.textContent = query;
  const text = document.createElement("span");
  text.className = "background-text";
  text.textContent = ` ${message} `;
  const stop = document.createElement("button");
  stop.type = "button";
  stop.textContent = "Stop";
  stop.addEventListener("click", () => controller.abort());
  item.append(what, text, stop);
  list.append(item);
  byId("background", HTMLElement).hidden = false;
  return { item, controller };
}

/**
 * The background search has found its hits: its line says how many, and links to its page.
 * @param {BackgroundSearch} running
 * @param {number} total
 * @param {string} url  the search's page
 */
export function finishBackground(running, total, url) {
  const { item } = running;
  item.dataset.state = "done";
  const text = item.querySelector(".background-text");
  if (text) text.textContent = `: ${total.toLocaleString("en")} ${total === 1 ? "hit" : "hits"} `;
  const link = document.createElement("a");
  link.href = url;
  link.textContent = "Show";
  item.querySelector("button")?.remove();
  item.append(link, dismissButton(item));
}

/**
 * The background search failed or was stopped: its line says so.
 * @param {BackgroundSearch} running
 * @param {string} reason
 */
export function failBackground(running, reason) {
  const { item } = running;
  item.dataset.state = "failed";
  const text = item.querySelector(".background-text");
  if (text) text.textContent = `: ${reason} `;
  item.querySelector("button")?.remove();
  item.append(dismissButton(item));
}

/** @param {HTMLLIElement} item */
function dismissButton(item) {
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "Dismiss";
  button.addEventListener("click", () => {
    item.remove();
    const list = byId("background-searches", HTMLUListElement);
    if (!list.children.length) byId("background", HTMLElement).hidden = true;
  });
  return button;
}
