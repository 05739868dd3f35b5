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

/**
 * A period of a trend (/api/v1/trend's points).
 * @typedef {object} TrendPoint
 * @property {string} period
 * @property {number} hits
 * @property {number} tokens
 * @property {number} texts
 * @property {number | null} per_million  null: no text in the period
 * @property {number | null} low  the 95 % band
 * @property {number | null} high
 * @property {boolean} sparse  less text than a rate can rest on
 * @property {string | null} concordance  the search page with the period's hits
 */

/**
 * A query's trend.
 * @typedef {object} TrendSeries
 * @property {string} q
 * @property {string} cqp
 * @property {number} total
 * @property {number} undated
 * @property {boolean} complete
 * @property {string[]} failed
 * @property {TrendPoint[]} points
 */

/** The series' line styles: colour and dash differ, so that they are told apart without colour too. */
export const SERIES_STYLES = [
  { colour: "#1f5fa8", dash: "" }, { colour: "#b3451f", dash: "7 4" }, { colour: "#2a7d3a", dash: "2 3" },
  { colour: "#7a3ea1", dash: "10 3 2 3" },
];
const WIDE = 800;
const HIGH = 260;
const MARGIN = { left: 70, right: 12, top: 10, bottom: 42 };

/**
 * One line per query over the periods, each with its 95 % band; a point per period with text (hollow
 * where the period has little text), each a link to its hits; a gap where a period has no text.
 * @param {TrendSeries[]} series
 * @param {string} by  the date attribute
 * @returns {SVGElement}
 */
export function trendChart(series, by) {
  const periods = series[0]?.points.map((p) => p.period) ?? [];
  const rated = series.flatMap((s) => s.points.filter((p) => p.per_million !== null && !p.sparse));
  const top = Math.max(...rated.map((p) => p.high ?? 0), ...series.flatMap((s) => s.points.map((p) => p.per_million ?? 0)), 0) || 1;
  const chart = svg("svg", { viewBox: `0 0 ${WIDE} ${HIGH}`, width: "100%", role: "group", class: "trend",
    "aria-label": `Hits per million tokens per period of ${by}, ${series.length} quer${series.length === 1 ? "y" : "ies"}` });
  const plotWidth = WIDE - MARGIN.left - MARGIN.right;
  const plotHeight = HIGH - MARGIN.top - MARGIN.bottom;
  const x = (/** @type {number} */ i) => MARGIN.left + (periods.length > 1 ? (plotWidth * i) / (periods.length - 1) : plotWidth / 2);
  const y = (/** @type {number} */ v) => MARGIN.top + plotHeight - (plotHeight * Math.min(v, top)) / top;
  const axes = svg("g", { class: "axes", "aria-hidden": "true" });
  for (const tick of [0, top / 2, top]) {
    axes.append(svg("line", { x1: MARGIN.left, x2: WIDE - MARGIN.right, y1: y(tick), y2: y(tick), class: "grid" }));
    axes.append(svg("text", { x: MARGIN.left - 6, y: y(tick) + 4, "text-anchor": "end" },
      tick >= 100 ? number(Math.round(tick)) : decimal(tick)));
  }
  const every = Math.max(1, Math.ceil(periods.length / 12)); // at most a dozen labels under the axis
  periods.forEach((period, i) => {
    if (i % every === 0 || i === periods.length - 1) {
      axes.append(svg("text", { x: x(i), y: HIGH - MARGIN.bottom + 18, "text-anchor": "middle" }, period));
    }
  });
  chart.append(axes);
  series.forEach((s, k) => {
    const style = SERIES_STYLES[k % SERIES_STYLES.length];
    const group = svg("g", { class: "series", role: "group", "aria-label": `${s.q}: ${number(s.total)} hits` });
    // the band and the line, in runs of periods with text (a period without text breaks them)
    /** @type {number[][]} */
    const runs = [];
    s.points.forEach((p, i) => {
      if (p.per_million === null) return;
      if (i > 0 && s.points[i - 1].per_million !== null && runs.length) runs[runs.length - 1].push(i);
      else runs.push([i]);
    });
    for (const run of runs) {
      const upper = run.map((i) => `${x(i)},${y(s.points[i].high ?? 0)}`);
      const lower = run.slice().reverse().map((i) => `${x(i)},${y(s.points[i].low ?? 0)}`);
      group.append(svg("polygon", { points: [...upper, ...lower].join(" "), fill: style.colour, class: "band", "aria-hidden": "true" }));
      group.append(svg("polyline", { points: run.map((i) => `${x(i)},${y(s.points[i].per_million ?? 0)}`).join(" "),
        stroke: style.colour, "stroke-dasharray": style.dash, class: "line", "aria-hidden": "true" }));
    }
    s.points.forEach((p, i) => {
      if (p.per_million === null || !p.concordance) return;
      const link = svg("a", { href: p.concordance });
      const little = p.sparse ? ` (little text: ${number(p.tokens)} tokens)` : "";
      link.append(svg("title", {}, `${s.q}, ${p.period}: ${decimal(p.per_million)} per million (95 %: ` +
        `${decimal(p.low ?? 0)}–${decimal(p.high ?? 0)}), ${number(p.hits)} hits in ${number(p.tokens)} tokens${little} — show these hits`));
      link.append(svg("circle", { cx: x(i), cy: y(p.per_million), r: 5, stroke: style.colour,
        fill: p.sparse ? "#fff" : style.colour, class: p.sparse ? "point sparse" : "point" }));
      group.append(link);
    });
    chart.append(group);
  });
  return chart;
}
