// @ts-check
// The distribution's bar chart (SVG): one bar per value of the page of the table, its length the
// hits per million tokens of that value's subcorpus; each bar is a link to its hits.

import { decimal, number } from "./search-dom.js";

const SVG = "http://www.w3.org/2000/svg";
/** Bars a chart draws at most: a page of the distribution table. */
export const CHART_ROWS = 30;
/** Height of a bar's line, in pixels. */
const LINE = 26;

/**
 * A bar: a value of the distribution.
 * @typedef {object} Bar
 * @property {string} value
 * @property {number} hits
 * @property {number} tokens
 * @property {number} per_million
 * @property {string} concordance  the search page showing these hits
 */

/**
 * @param {string} name
 * @param {Record<string, string | number>} attributes
 * @param {string} [text]
 * @returns {SVGElement}
 */
function svg(name, attributes, text) {
  const element = /** @type {SVGElement} */ (document.createElementNS(SVG, name));
  for (const [key, val] of Object.entries(attributes)) element.setAttribute(key, String(val));
  if (text !== undefined) element.textContent = text;
  return element;
}

/**
 * The chart of (at most CHART_ROWS of) these values.
 * @param {Bar[]} rows
 * @param {string} by  the metadata the values are of
 * @returns {{chart: SVGElement, bars: number}}
 */
export function barChart(rows, by) {
  const shown = rows.slice(0, CHART_ROWS);
  const top = Math.max(...shown.map((r) => r.per_million), 0) || 1;
  const chart = svg("svg", { width: "100%", height: shown.length * LINE + 4, role: "group",
    "aria-label": `Hits per million tokens by ${by}`, class: "bars" });
  shown.forEach((r, i) => {
    const y = i * LINE + 2;
    const name = r.value === "" ? "(no value)" : r.value;
    const link = svg("a", { href: r.concordance });
    link.append(svg("title", {}, `${name}: ${number(r.hits)} hits in ${number(r.tokens)} tokens, ${decimal(r.per_million)} per million — show these hits`));
    const label = name.length > 28 ? `${name.slice(0, 27)}…` : name;
    link.append(svg("text", { x: "27%", y: y + 16, "text-anchor": "end", class: "label" }, label));
    const width = (58 * r.per_million) / top;
    link.append(svg("rect", { x: "28%", y: y + 3, width: `${Math.max(width, r.hits ? 0.3 : 0)}%`, height: 17, rx: 2 }));
    link.append(svg("text", { x: `${28.6 + width}%`, y: y + 16, class: "figure" }, `${decimal(r.per_million)} (${number(r.hits)})`));
    chart.append(link);
  });
  return { chart, bars: shown.length };
}

/**
 * A stretch of the corpus and the hits that start in it (/api/v1/dispersion's bins).
 * @typedef {object} Stretch
 * @property {number} start  global position of its first token
 * @property {number} end  of its last
 * @property {number} hits
 */

/** Height of the dispersion's columns, in pixels. */
const STRIP = 90;

/**
 * The hits over the corpus as columns, one per stretch, left to right (where in the corpus they fall).
 * @param {Stretch[]} stretches
 * @param {string} parts  what the measure's parts are (for the label)
 * @returns {SVGElement}
 */
export function stripChart(stretches, parts) {
  const top = Math.max(...stretches.map((s) => s.hits), 0) || 1;
  const width = 100 / Math.max(stretches.length, 1);
  const chart = svg("svg", { width: "100%", height: STRIP + 4, role: "img", class: "strip",
    "aria-label": `Hits in ${stretches.length} equal stretches of the corpus (dispersion over ${parts}): ` +
      stretches.map((s) => number(s.hits)).join(", ") });
  stretches.forEach((s, i) => {
    const height = (STRIP * s.hits) / top;
    const column = svg("rect", { x: `${i * width}%`, y: STRIP + 2 - height, width: `${width * 0.9}%`,
      height: Math.max(height, s.hits ? 1 : 0), rx: 1 });
    column.append(svg("title", {}, `tokens ${number(s.start)}–${number(s.end)}: ${number(s.hits)} hits`));
    chart.append(column);
  });
  return chart;
}
