// @ts-check
// The page module of the type/token analysis (cowbird/core/analyses/ttr.py): its summary, and its
// cells — the ratio to three decimals, a part's label as a link to its hits (the search with the
// filter LABEL=VALUE), positions as numbers.

import { decimal, number } from "./search-dom.js";

/** @typedef {import("./api-types").TtrResult} TtrResult */
/** @typedef {import("./api-types").TtrRow} TtrRow */

/**
 * @param {Record<string, unknown>} body  a TtrResult
 * @returns {string}
 */
export function summary(body) {
  const answer = /** @type {TtrResult} */ (/** @type {unknown} */ (body));
  const of = `${number(answer.total)} hits, in ${number(answer.parts_with_hits)} ${answer.parts_attribute} ` +
    `region${answer.parts_with_hits === 1 ? "" : "s"}`;
  if (answer.mean_ttr === null) return `${of}: no part has as many tokens as asked.`;
  const shown = answer.rows_total === answer.parts_with_hits ? "" : ` (${number(answer.rows_total)} with enough tokens)`;
  return `${of}${shown}: mean type/token ratio of the ${answer.attribute} values ${decimal(answer.mean_ttr, 3)}` +
    `${answer.truncated ? "; a node had more parts than it answers, some are missing" : ""}.`;
}

/**
 * @param {string} column
 * @param {Record<string, unknown>} value  a TtrRow
 * @param {Record<string, unknown>} body  the TtrResult
 * @param {URLSearchParams} search  the search's parameters
 * @returns {string | Node}
 */
export function cell(column, value, body, search) {
  const row = /** @type {TtrRow} */ (/** @type {unknown} */ (value));
  if (column === "ttr") return decimal(row.ttr, 3);
  if (column === "label") {
    const label = /** @type {string | null} */ (body.label ?? null);
    if (row.label === null || label === null) return "";
    const link = document.createElement("a");
    const hits = new URLSearchParams(search);
    hits.append("filter", `${label}=${row.label}`);
    link.href = `/?${hits}`;
    link.textContent = row.label;
    link.title = `The hits in ${label} ${row.label}`;
    return link;
  }
  const number_ = row[/** @type {"start" | "end" | "tokens" | "types"} */ (column)];
  return typeof number_ === "number" ? number(number_) : String(number_ ?? "");
}
