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
 * A bar: a value of the distribution (what the chart draws of its row).
 * @typedef {Pick<import("./api-types").DistributionRow, "value" | "hits" | "tokens" | "per_million" | "concordance">} Bar
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

/** @typedef {import("./api-types").DispersionBin} Stretch  /api/v1/dispersion's bins */

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

/** @typedef {import("./api-types").TrendSeries} TrendSeries  a query's trend */

/** The series' line styles: colour and dash differ, so that they are told apart without colour too. */
export const SERIES_STYLES = [
  { colour: "#1f5fa8", dash: "" }, { colour: "#b3451f", dash: "7 4" }, { colour: "#2a7d3a", dash: "2 3" },
  { colour: "#7a3ea1", dash: "10 3 2 3" },
];
/** Width the trend is drawn at when its container has none yet (hidden), in CSS pixels. */
const WIDE = 800;
/** The narrowest the trend is drawn (a phone's column); a narrower container scrolls it. */
const NARROWEST = 280;
/** Height of the trend, in CSS pixels (its labels are the stylesheet's 12 px: the chart is never scaled). */
const HIGH = 280;
/** Width of a character of the trend's 12-px labels (digits, en's separators), generously, in pixels. */
const CHAR = 7.2;
/** Pixels above the plot, beside it on the right, and for each axis's title. */
const EDGE = { top: 12, right: 10, title: 20 };
/** The y axis's ticks: at least and at most this many (0 included), 1-2-5 steps apart. */
const TICKS = { fewest: 4, most: 6 };

/**
 * Round ticks from 0 past `top`: steps of 1, 2 or 5 times a power of ten, the largest step that gives
 * at least TICKS.fewest ticks (so at most TICKS.most), all written with the step's decimals.
 * @param {number} top  the highest value drawn (> 0)
 * @returns {{ticks: number[], decimals: number}}
 */
export function niceTicks(top) {
  const steps = [];
  for (let power = Math.floor(Math.log10(top)) - 2; steps.length < 12; power += 1) {
    for (const m of [1, 2, 5]) steps.push(m * 10 ** power);
  }
  // the largest step that still gives TICKS.fewest ticks; a 1-2-5 step at most 2.5× the next smaller
  // one, that step gives at most TICKS.most
  const step = steps.filter((s) => Math.ceil(top / s - 1e-9) + 1 >= TICKS.fewest).at(-1) ?? steps[0];
  const count = Math.ceil(top / step - 1e-9);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return { ticks: Array.from({ length: count + 1 }, (_, i) => Number((i * step).toFixed(decimals))), decimals };
}

/**
 * Trend periods ("2005", "2005-05", decade "2000") as filters: the regular expression matching exactly
 * the values of a period, as the server writes it (cowbird.core.periods.period_regex) — so that the
 * filter row shows a trend point's filter as "text_year = 2005" and sends the exact expression.
 */
const SEPARATOR = "[-/.]?";
const MONTH = "(?:0[1-9]|1[0-2])";
const DAY_PART = `(?:${SEPARATOR}(?:0[1-9]|[12][0-9]|3[01]))?`;
const TIME = "(?:[T ].*)?";

/** @typedef {import("./api-types").TrendResult["period"]} Period  the periods a trend counts in */

/**
 * The regular expression matching exactly the dates of `key` (cowbird.core.periods.period_regex).
 * @param {string} key  2005, 2005-05 or (a decade) 2000
 * @param {Period} period
 * @returns {string}
 */
export function periodRegex(key, period) {
  if (period === "month") {
    const [year, month] = key.split("-");
    return `${year}${SEPARATOR}${month}${DAY_PART}${TIME}`;
  }
  const rest = `(?:${SEPARATOR}${MONTH}${DAY_PART})?${TIME}`;
  return period === "decade" ? `${key.slice(0, 3)}[0-9]${rest}` : `${key}${rest}`;
}

/**
 * The period a filter's regular expression is exactly the expression of (periodRegex), or null.
 * @param {string} regex
 * @returns {{key: string, period: Period} | null}
 */
export function periodOf(regex) {
  const year = regex.slice(0, 4);
  const month = regex.slice(4 + SEPARATOR.length, 6 + SEPARATOR.length);
  /** @type {{key: string, period: Period}[]} */
  const candidates = [{ key: year, period: "year" }, { key: `${year}-${month}`, period: "month" },
    { key: `${regex.slice(0, 3)}0`, period: "decade" }];
  return candidates.find((c) => /^[0-9]{4}(-[0-9]{2})?$/.test(c.key) && periodRegex(c.key, c.period) === regex) ?? null;
}

/** @param {number} value @param {number} decimals @returns {string} */
const fixed = (value, decimals) =>
  value.toLocaleString("en", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });

/**
 * One line per query over the periods, each with its 95 % band; a point per period with text (hollow
 * where the period has little text), each a link to its hits; a gap where a period has no text.
 * Drawn at `width` pixels, never scaled, so that its labels keep the stylesheet's size on a phone;
 * round y ticks under the axis's title, every label inside the chart.
 * @param {TrendSeries[]} series
 * @param {string} by  the date attribute
 * @param {Period} period
 * @param {number} width  the container's, in CSS pixels (0: not laid out yet)
 * @returns {SVGElement}
 */
export function trendChart(series, by, period, width) {
  const wide = Math.max(NARROWEST, Math.round(width) || WIDE);
  const periods = series[0]?.points.map((p) => p.period) ?? [];
  const rated = series.flatMap((s) => s.points.filter((p) => p.per_million !== null && !p.sparse));
  const highest = Math.max(...rated.map((p) => p.high ?? 0), ...series.flatMap((s) => s.points.map((p) => p.per_million ?? 0)), 0) || 1;
  const { ticks, decimals } = niceTicks(highest);
  const top = ticks[ticks.length - 1];
  const labels = ticks.map((t) => fixed(t, decimals));
  const left = EDGE.title + Math.max(...labels.map((l) => l.length)) * CHAR + 8;
  const bottom = 18 + EDGE.title + 6; // the periods' labels, then the axis's title
  const chart = svg("svg", { viewBox: `0 0 ${wide} ${HIGH}`, width: wide, height: HIGH, role: "group", class: "trend",
    "aria-label": `Hits per million tokens per ${period} of ${by}, ${series.length} quer${series.length === 1 ? "y" : "ies"}` });
  const plotWidth = wide - left - EDGE.right;
  const plotHeight = HIGH - EDGE.top - bottom;
  // the first and the last point stand in from the plot's edges by half a label: every label inside
  const label = Math.max(...periods.map((p) => p.length), 4) * CHAR;
  const inset = periods.length > 1 ? label / 2 + 2 : plotWidth / 2;
  const x = (/** @type {number} */ i) => left + inset + (periods.length > 1 ? ((plotWidth - 2 * inset) * i) / (periods.length - 1) : 0);
  const y = (/** @type {number} */ v) => EDGE.top + plotHeight - (plotHeight * Math.min(v, top)) / top;
  const axes = svg("g", { class: "axes", "aria-hidden": "true" });
  ticks.forEach((tick, k) => {
    axes.append(svg("line", { x1: left, x2: wide - EDGE.right, y1: y(tick), y2: y(tick), class: "grid" }));
    axes.append(svg("text", { x: left - 6, y: y(tick) + 4, "text-anchor": "end" }, labels[k]));
  });
  const middle = EDGE.top + plotHeight / 2;
  axes.append(svg("text", { x: 14, y: middle, transform: `rotate(-90 14 ${middle})`, "text-anchor": "middle",
    class: "title" }, "per million tokens"));
  axes.append(svg("text", { x: left + plotWidth / 2, y: HIGH - 6, "text-anchor": "middle", class: "title" },
    `${period} (${by})`));
  // as many period labels as fit side by side, the last period's always among them
  const apart = periods.length > 1 ? (plotWidth - 2 * inset) / (periods.length - 1) : plotWidth;
  const every = Math.max(1, Math.ceil((label + 8) / apart));
  const shown = periods.map((_, i) => i).filter((i) => i % every === 0);
  const last = periods.length - 1;
  if (last > 0 && shown.at(-1) !== last) {
    if ((last - (shown.at(-1) ?? 0)) * apart < label + 8) shown.pop();
    shown.push(last);
  }
  for (const i of shown) {
    axes.append(svg("text", { x: x(i), y: HIGH - bottom + 18, "text-anchor": "middle" }, periods[i]));
  }
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

/** @type {WeakMap<HTMLElement, ResizeObserver>} the observer redrawing each container's trend */
const redrawing = new WeakMap();

/**
 * Draws the trend into `container` at its width, and again whenever that width changes (a phone
 * turned, a window resized), so that it is never scaled.
 * @param {HTMLElement} container  laid out (not hidden), or it is drawn at WIDE until it is
 * @param {TrendSeries[]} series
 * @param {string} by
 * @param {Period} period
 */
export function drawTrend(container, series, by, period) {
  let width = container.clientWidth;
  container.replaceChildren(trendChart(series, by, period, width));
  redrawing.get(container)?.disconnect();
  const observer = new ResizeObserver(() => {
    if (container.clientWidth === width || container.clientWidth === 0) return;
    width = container.clientWidth;
    container.replaceChildren(trendChart(series, by, period, width));
  });
  observer.observe(container);
  redrawing.set(container, observer);
}
