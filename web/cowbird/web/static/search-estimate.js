// @ts-check
// The estimate line and the question before a long search. As the user types, /api/v1/estimate says
// what the form's search would find and how long it would take, without running it ("about 12,000
// hits · fast"); a search the server wants confirmed (the estimate's `confirm`) is run by the form
// only after the user says so in the page's #confirm-run dialog. An estimate is advice: one that
// fails hides the line (the query's errors are the CQP line's to show) and never stops a search,
// and a search never waits for its estimate.

import { aborted, begin, cancel, end, getJson } from "./search-api.js";
import { byId, number } from "./search-dom.js";
import { readSearch } from "./search-form.js";
import { searchParams, setEstimate, setTimer, state } from "./search-state.js";

/** @typedef {import("./search-state.js").Estimate} Estimate */
/** @typedef {import("./search-state.js").DeepReadonly<Estimate>} EstimateRead  an estimate as the state holds it */
/** @typedef {import("./search-state.js").Search} Search */

/** Milliseconds of quiet in the form before its search is estimated (after its CQP line's translation). */
const DELAY = 400;

const dialog = byId("confirm-run", HTMLDialogElement);

// ---------------------------------------------------------------- the estimate line

/**
 * The form has changed: the line, which was about the search before, goes at once (as does the
 * estimate in flight), and the form's search is estimated when the user has stopped typing. A
 * line already about the form's search stays (a change event after the input events, say).
 */
export function estimateLater() {
  const line = byId("estimate", HTMLElement);
  if (!line.hidden && state.estimate !== null && state.estimate.about === searchParams(readSearch()).toString()) return;
  hideEstimate();
  cancel("estimate");
  clearTimeout(state.timers.estimate);
  setTimer("estimate", window.setTimeout(estimate, DELAY));
}

/** Asks the server to estimate the form's search (an estimate in flight is dropped). */
export async function estimate() {
  clearTimeout(state.timers.estimate);
  const search = readSearch();
  cancel("estimate");
  hideEstimate();
  if (!search.q.trim()) return;
  const about = searchParams(search).toString();
  const signal = begin("estimate");
  try {
    /** @type {Estimate} */
    const answer = await getJson("estimate", searchParams(search), signal);
    setEstimate(about, answer);
    if (searchParams(readSearch()).toString() === about) showEstimate(answer);
  } catch (error) {
    if (!aborted(error)) hideEstimate(); // a query error (the CQP line says it), or the server's trouble
  } finally {
    end("estimate", signal);
  }
}

/**
 * The latest estimate of exactly this search, if one has come.
 * @param {Search} search
 * @returns {EstimateRead | null}
 */
export function estimateOf(search) {
  return state.estimate !== null && state.estimate.about === searchParams(search).toString() ? state.estimate.answer : null;
}

/** @param {EstimateRead} answer */
function showEstimate(answer) {
  const line = byId("estimate", HTMLElement);
  line.textContent = estimateText(answer);
  line.dataset.confirm = answer.confirm ? "1" : "0";
  line.hidden = false;
}

function hideEstimate() {
  const line = byId("estimate", HTMLElement);
  line.hidden = true;
  line.textContent = "";
  delete line.dataset.confirm;
}

/**
 * The estimate in words: "exactly 352 hits · fast", "about 1.2 million hits · seconds", "about
 * 3,400 hits · minutes — will ask before running", "hits unknown (even a sample takes long) · seconds at
 * least", "no estimate for this query".
 * @param {EstimateRead} answer
 * @returns {string}
 */
export function estimateText(answer) {
  // no hits but a time: even the sample took longer than an estimate may, and the time is a lower bound
  const slow = answer.hits === null && answer.seconds !== null;
  const parts = [hitsText(answer) ?? (slow ? "hits unknown (even a sample takes long)" : "no estimate for this query")];
  if (answer.time_class) parts.push(slow ? `${answer.time_class} at least` : answer.time_class);
  let text = parts.join(" · ");
  const failed = answer.failed.length;
  if (failed) text += ` (${number(failed)} partition${failed === 1 ? "" : "s"} gave no estimate)`;
  if (answer.confirm) text += " — will ask before running";
  return text;
}

/**
 * The estimated hits in words ("exactly 352 hits", "about 12,000 hits"); null when the query cannot be estimated.
 * @param {EstimateRead} answer
 * @returns {string | null}
 */
function hitsText(answer) {
  const n = answer.hits;
  if (n === null) return null;
  if (n === 0) return answer.exact ? "no hits" : "probably no hits";
  const noun = n === 1 ? "hit" : "hits";
  return answer.exact ? `exactly ${number(n)} ${noun}` : `about ${rounded(n)} ${noun}`;
}

/**
 * An estimated number to two significant figures: 87, 12,000, 1.2 million, 3.4 billion.
 * @param {number} n
 */
function rounded(n) {
  const r = n < 100 ? Math.round(n) : Number(n.toPrecision(2));
  if (r >= 1e9) return `${number(r / 1e9)} billion`;
  if (r >= 1e6) return `${number(r / 1e6)} million`;
  return number(r);
}

// ---------------------------------------------------------------- the question before a long search

/**
 * Whether the user wants a search run that its estimate says may take long, asked in the page's
 * dialog: "Run it" (true), "Cancel" or Escape (false).
 * @param {EstimateRead} answer
 * @returns {Promise<boolean>}
 */
export function askToRun(answer) {
  if (dialog.open) return Promise.resolve(false); // already asking about a search
  const hits = hitsText(answer);
  const time = answer.time_class === "minutes" ? "minutes"
    : answer.time_class === "seconds" && answer.seconds !== null ? `about ${number(Math.max(1, Math.round(answer.seconds)))} seconds`
    : "a while";
  byId("confirm-run-text", HTMLElement).textContent = `This query may take ${time}${hits ? ` (${hits})` : ""}. Run it?`;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "run"), { once: true });
  });
}

/** The dialog's buttons. */
export function setUpConfirm() {
  byId("confirm-run-go", HTMLButtonElement).addEventListener("click", () => dialog.close("run"));
  byId("confirm-run-cancel", HTMLButtonElement).addEventListener("click", () => dialog.close("cancel"));
}
