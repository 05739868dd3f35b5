// @ts-check
// cowbird's search page: preview a query, sort it, count it (frequency, distribution, collocations),
// then download it. Plain JavaScript modules, no build step, loaded from this site only (the page's
// Content-Security-Policy has no inline script). The page talks only to the public API and keeps
// the whole search, the page of hits or the random sample shown, the view and its settings in the
// URL (search-state.js), so that a results page can be bookmarked, shared, reloaded and reached with Back.
//
// The modules: search-main.js (this one: running a search, the user's history, the wiring),
// search-state.js (the state, the URL, every request's parameters), search-api.js (requests, aborts,
// problem+json), search-dom.js (look-ups, templates, formats), search-form.js (the form, the CQP
// line, the anchors), search-estimate.js (the estimate line, the question before a long search),
// search-kwic.js (the concordance), search-tables.js (the tabs and analyses), search-chart.js (the
// distribution's bars), search-download.js (the download dialog), search-wordlist.js (word lists and
// n-grams of a corpus or subcorpus), search-sketch.js (word sketches, sketch differences, the
// thesaurus), search-saved.js (saved and shared searches, this browser's searches),
// search-categories.js (categorising a saved search's lines with the keys 1-9).

import { ApiProblem, aborted, begin, busy, cancel, detach, end, getJson, getLines } from "./search-api.js";
import { failBackground, finishBackground, showBackground } from "./search-background.js";
import { DECLARED, DECLARED_ROWS, declaredOffset, setDeclaredOffset } from "./search-declared.js";
import { byId, corpusInfo, fromTemplate, part } from "./search-dom.js";
import { openDownload, setUpDownload } from "./search-download.js";
import { askToRun, estimate, estimateLater, estimateOf, setUpConfirm } from "./search-estimate.js";
import {
  addFilter, applySearch, describeCorpus, fillMoreCorpora, fillSortLevels, formChanged, hideQueryError, readSearch, setCqpLine,
  showAnchors, showCorpusProblem, showQueryError, showSortControls, syncColumns, translate,
} from "./search-form.js";
import { clearHits, lastPage, showCorpusHits, showHits, showProgress, showStopped } from "./search-kwic.js";
import {
  ANALYSES, PAGE, PREFIX, SETTINGS, VIEWS, applySettings, forgetAnalysed, fromUrl, inlineOf, pageUrl, queryRequest,
  readSettings, rememberDefaults, sameSearch, setCategories, setCollOrder, setShown, setTableOffset, setTableOffsets,
  setTimer, showInUrl, sortOrder, state,
} from "./search-state.js";
import { analyse, selectView, showPanels, turnPage } from "./search-tables.js";
import { categoriseRows, searchOfSaved, setUpCategories } from "./search-categories.js";
import { rememberLocally, setUpSaved } from "./search-saved.js";
import { restoreSketch, setUpSketches } from "./search-sketch.js";
import { restoreWordList, setUpWordList } from "./search-wordlist.js";
import { setUpSubcorpora } from "./search-subcorpora.js";
import { describeBuilder, readQuery, setUpBuilder } from "./search-builder.js";

/** @typedef {import("./search-state.js").Sample} Sample */
/** @typedef {import("./search-kwic.js").QueryResult} QueryResult */
/** @typedef {import("./search-kwic.js").QueryEvent} QueryEvent */
/** @typedef {import("./search-kwic.js").Progress} Progress */

// ---------------------------------------------------------------- running a search

/**
 * Searches begun on this page, counted: a search that went on in the background shows its hits in
 * place when it ends if no other began meanwhile (a sorted page deep in the hits, the last one
 * say), else only its line's link does.
 */
let begun = 0;

/** @param {boolean} running  a search (the results stay busy while an analysis counts) */
function setBusy(running) {
  byId("progress", HTMLElement).hidden = !running;
  byId("results", HTMLElement).setAttribute("aria-busy", String(running || busy("analysis")));
}

/**
 * The hits of the search in the form: a page from `offset`, or a random `sample`. Only a search
 * that succeeded goes into the URL — pushed (a new entry for Back) when the user asked for it,
 * else replaced — so that Back never returns to a failed search.
 *
 * The answer streams in (stream=1): in corpus order the page is shown as soon as it is known and
 * the total grows as each partition counts, said not to be final ("≥"), until the result, which
 * is shown as a plain answer would be. A sorted page or a sample comes whole, with the result.
 * Cancel (or a newer search) aborts the request, and the server stops the nodes' work.
 * @param {{offset?: number, sample?: Sample | null, push?: boolean}} what
 */
async function preview({ offset = 0, sample = null, push = false } = {}) {
  const search = readSearch();
  hideQueryError();
  if (!search.q.trim()) return;
  const mine = ++begun;
  const order = sample ? null : sortOrder(readSettings());
  const info = corpusInfo();
  const show = ["lemma", "pos"].filter((a) => info.p_attributes.includes(a));
  const inline = inlineOf(readSettings()).filter((a) => info.p_attributes.includes(a));
  syncColumns();
  const meta = String(readSettings()["kwic-meta"] || "").split(",").filter((name) => info.meta.includes(name));
  const boundaries = ["text", "s"].filter((r) => info.s_attributes.includes(r)); // marked in the lines
  const signal = begin("query");
  setBusy(true);
  delete document.body.dataset.background;
  const started = performance.now();
  /** @type {Progress | null} what has come before the result */
  let progress = null;
  /** @type {import("./search-background.js").BackgroundSearch | null} once it runs in the background */
  let running = null;
  let backgroundUrl = "";
  try {
    const params = queryRequest(search, { offset, sample, order, show, inline, meta, boundaries });
    params.set("stream", "1");
    /** @type {QueryResult | null} */
    let body = null;
    /** @type {AsyncGenerator<QueryEvent | QueryResult, void, undefined>} */
    const answers = getLines("query", params, signal);
    for await (const step of answers) {
      if (running) { // in the background: only its result matters, and nothing of the page is touched
        if ("event" in step && step.event === "error") throw new ApiProblem(step);
        if (!("event" in step) || step.event === "result") body = step;
        continue;
      }
      if (!("event" in step) || step.event === "result") { // (a plain answer has no events); the last event
        body = step;
        continue;
      }
      if (step.event === "error") throw new ApiProblem(step);
      if (step.event === "started") {
        progress = { offset, hits: null, atLeast: 0, counted: 0, partitions: step.partitions, failed: [], corpus: search.corpus };
        continue;
      }
      if (step.event === "background") { // heavy: listed as running in the background, the page free meanwhile
        const controller = detach("query", signal);
        if (controller) {
          running = showBackground(search.q, step.message, controller);
          backgroundUrl = urlOf(search, offset);
          document.body.dataset.background = step.reason;
          byId("summary", HTMLElement).textContent = "";
          setBusy(false);
        }
        continue;
      }
      progress ??= { offset, hits: null, atLeast: 0, counted: 0, partitions: 0, failed: [], corpus: search.corpus };
      if (step.event === "page") {
        progress.hits = step.hits;
        document.body.dataset.pageMs = String(Math.round(performance.now() - started)); // the first hits shown
      } else {
        progress.atLeast = step.total_at_least;
        progress.counted = step.counted;
        progress.partitions = step.partitions;
        progress.failed = step.failed;
      }
      showProgress(progress, show, inline);
    }
    if (body === null) throw new Error("the answer ended before its result");
    if (running) {
      finishBackground(running, body.total, backgroundUrl);
      if (mine !== begun) return; // another search since: the page shows that one
    }
    const drawn = performance.now();
    const changed = !state.shown || !sameSearch(state.shown.search, search);
    setShown({ search, offset, sample, total: body.total, order, inline });
    if (changed) {
      if (push) for (const view of ANALYSES) setTableOffset(view, 0);
      if (push) for (const { name } of DECLARED) setDeclaredOffset(name, 0);
      forgetAnalysed();
    }
    const saved = searchOfSaved();
    if (changed && state.categories && saved && !sameSearch(search, saved)) {
      setCategories(null); // another search: its lines are not the saved search's
    }
    showHits(body, sample, show, inline);
    showCorpusHits(body, (corpus) => urlOf({ ...search, corpus }, 0), (from) => preview({ offset: from, push: true }));
    categoriseRows(body.hits);
    showPanels();
    document.body.dataset.renderMs = String(Math.round(performance.now() - drawn));
    document.body.dataset.queryMs = String(Math.round(drawn - started));
    showAnchors(body.anchors ?? [], search);
    setCqpLine(body.cqp, "ran"); // what ran
    showInUrl(push);
    if (!sample && offset === 0) {
      loadHistory();
      rememberLocally({ url: pageUrl(), q: search.q, corpus: search.corpus, total: body.total });
    }
    if (state.view !== "kwic" && body.total > 0) analyse();
    // a search that was to be confirmed has run: the nodes now know it (their cache), and may say it costs nothing
    if (body.complete && estimateOf(search)?.confirm && sameSearch(readSearch(), search)) estimate();
  } catch (error) {
    if (running) {
      failBackground(running, error instanceof ApiProblem ? error.problem.detail ?? "failed"
        : aborted(error) ? "stopped" : `failed: ${error instanceof Error ? error.message : String(error)}`);
    } else if (error instanceof ApiProblem) {
      showQueryError(error.problem);
      clearResults();
    } else if (aborted(error)) {
      if (state.requests.query?.signal === signal) showStopped(progress); // cancelled, not overtaken by a newer search
    } else {
      showQueryError({ detail: `the search failed: ${error instanceof Error ? error.message : String(error)}` });
      clearResults();
    }
  } finally {
    end("query", signal);
    setBusy(busy("query")); // still busy when a newer search took this one's place
  }
}

/**
 * The page's URL for a search from `offset` (as it would be once shown), with the page's settings.
 * @param {import("./search-state.js").Search} search
 * @param {number} offset
 */
function urlOf(search, offset) {
  return pageUrl(readSettings(), { search, offset, sample: null, total: 0, order: null, inline: [] });
}

/**
 * Runs the form's search as the user asked (a new entry of the history), from its first hit or as
 * a random `sample` — but a search whose latest estimate (of exactly this search) says the server
 * wants it confirmed runs only when the user says so; declined, nothing runs and the URL stays.
 * A search not estimated yet runs at once: its estimate is not waited for. A submit asks each
 * time (`again`); a sort or a sample of the search already shown does not ask again, nor do the
 * pages of a search (Next, Previous) and the searches of the history (Back, Forward).
 * @param {{sample?: Sample | null, again?: boolean}} what
 */
async function start({ sample = null, again = true } = {}) {
  const search = readSearch();
  const known = estimateOf(search);
  const shown = state.shown !== null && sameSearch(state.shown.search, search);
  if (known?.confirm && (again || !shown) && !(await askToRun(known))) return;
  preview({ sample, push: true });
}

/** No results on the page: after a failed search nothing of an earlier one stays to be taken for its answer. */
function clearResults() {
  setShown(null);
  forgetAnalysed();
  clearHits();
  showPanels();
}

/**
 * The page as its URL states it: the form, the settings and the view, then the search's hits.
 * @param {URLSearchParams} params
 */
function restore(params) {
  const restored = fromUrl(params);
  const open = applySearch(restored.search);
  const missing = restored.search.corpus !== "" && !open ? restored.search.corpus : null;
  applySettings(restored.settings);
  setCollOrder(restored.collOrder);
  setTableOffsets(restored.tableOffset);
  for (const { name } of DECLARED) setDeclaredOffset(name, Number(params.get(`${name}_offset`)) || 0);
  setCategories(restored.categories);
  showSortControls();
  selectView(restored.view, false);
  showCorpusProblem(missing);
  estimateLater(); // the line is about the form's search, never an earlier one
  if (missing !== null) {
    clearResults();
    translate();
    return;
  }
  restoreWordList(params);
  restoreSketch(params);
  preview({ offset: restored.offset, sample: restored.sample });
}

// ---------------------------------------------------------------- the user's last searches

async function loadHistory() {
  const list = document.getElementById("history-list");
  if (!list) return; // anonymous: no history
  /** @type {import("./api-types").History} */
  let answer;
  try {
    answer = await getJson("history", new URLSearchParams());
  } catch {
    return; // the list stays as it was
  }
  list.replaceChildren(
    ...answer.data.map((past) => {
      const item = fromTemplate("history-item", HTMLLIElement);
      const link = part(item, "a", HTMLAnchorElement);
      link.href = past.url;
      link.textContent = past.q;
      item.append(` — ${past.corpus}, ${past.syntax}${past.ignore_case ? ", ignore case" : ""}` +
        `${past.filters.length ? `, ${past.filters.join(", ")}` : ""}: ${past.total.toLocaleString("en")} hits`);
      return item;
    }),
  );
}

// ---------------------------------------------------------------- wiring

/**
 * Settings changed in quick succession start one request, not one each (a viewer runs few at once).
 * @param {() => void} action
 */
function settle(action) {
  clearTimeout(state.timers.settle);
  setTimer("settle", window.setTimeout(action, 200));
}

byId("search", HTMLFormElement).addEventListener("submit", (event) => {
  event.preventDefault();
  showCorpusProblem(null);
  start();
});
byId("cancel", HTMLButtonElement).addEventListener("click", () => cancel("query"));
for (const pager of document.querySelectorAll(".kwic-pager")) { // above the lines and below them
  /** @param {string} name @param {() => number} offset  the first hit of the page it opens */
  const turn = (name, offset) => part(pager, `button.${name}`, HTMLButtonElement).addEventListener("click", () =>
    preview({ offset: offset(), push: true }));
  turn("first", () => 0);
  turn("prev", () => Math.max(0, (state.shown?.offset ?? 0) - PAGE));
  turn("next", () => (state.shown?.offset ?? 0) + PAGE);
  turn("last", () => lastPage(state.shown?.total ?? 0));
  const input = part(pager, "input.page-number", HTMLInputElement);
  const jump = () => { // a page by its number; past the last: the last
    const page = Number(input.value);
    if (!Number.isInteger(page) || page < 1) {
      input.setCustomValidity(`A page number from 1 to ${input.max}`);
      input.reportValidity();
      return;
    }
    input.setCustomValidity("");
    preview({ offset: Math.min((page - 1) * PAGE, lastPage(state.shown?.total ?? 0)), push: true });
  };
  part(pager, "button.go", HTMLButtonElement).addEventListener("click", jump);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault(); // (not the search form's submit)
      jump();
    }
  });
  input.addEventListener("input", () => input.setCustomValidity(""));
}
byId("random", HTMLButtonElement).addEventListener("click", () =>
  start({ sample: { size: PAGE, seed: Math.floor(Math.random() * 2 ** 31) }, again: false }));
byId("open-download", HTMLButtonElement).addEventListener("click", openDownload);
setUpDownload();
setUpConfirm();
setUpWordList();
setUpSketches();
setUpSaved();
setUpCategories();
setUpSubcorpora();
byId("add-filter", HTMLButtonElement).addEventListener("click", () => part(addFilter(), "input", HTMLInputElement).focus());
byId("corpus", HTMLSelectElement).addEventListener("change", () => {
  showCorpusProblem(null);
  describeCorpus();
  describeBuilder();
  fillMoreCorpora();
});
/** @returns {string} the query language chosen */
const syntaxChosen = () => part(document, 'input[name="syntax"]:checked', HTMLInputElement).value;
setUpBuilder({
  written: (cqp) => { // the boxes' CQP goes into the query field, as CQP
    byId("q", HTMLInputElement).value = cqp;
    part(document, 'input[name="syntax"][value="cqp"]', HTMLInputElement).checked = true;
    formEdited();
  },
  current: () => ({ q: byId("q", HTMLInputElement).value, syntax: syntaxChosen() }),
});
let reading = 0; // a query typed into the field is read back into the boxes once typing pauses
byId("q", HTMLInputElement).addEventListener("input", () => {
  clearTimeout(reading);
  reading = window.setTimeout(() => void readQuery(byId("q", HTMLInputElement).value, syntaxChosen()), 300);
});
/** Any change to the form: its CQP line and its estimate line wait for the server's word on the form as it now is. */
function formEdited() {
  formChanged();
  estimateLater();
}
byId("search", HTMLFormElement).addEventListener("input", formEdited);
byId("search", HTMLFormElement).addEventListener("change", formEdited);
byId("filter-rows", HTMLElement).addEventListener("click", (event) => {
  if (event.target instanceof Element && event.target.closest("button.remove")) formEdited();
});
for (const view of VIEWS) {
  byId(`tab-${view}`, HTMLButtonElement).addEventListener("click", () => {
    selectView(view);
    if (state.shown) history.replaceState(null, "", pageUrl());
    analyse();
  });
}
for (const view of ANALYSES) {
  part(document, `#${PREFIX[view]}-pager .prev`, HTMLButtonElement).addEventListener("click", () => turnPage(view, -1));
  part(document, `#${PREFIX[view]}-pager .next`, HTMLButtonElement).addEventListener("click", () => turnPage(view, 1));
}
for (const { name } of DECLARED) { // a declared analysis's pager: the page of rows before or after
  for (const [side, step] of /** @type {const} */ ([["prev", -1], ["next", 1]])) {
    part(document, `#${name}-pager .${side}`, HTMLButtonElement).addEventListener("click", () => {
      setDeclaredOffset(name, declaredOffset(name) + step * DECLARED_ROWS);
      if (state.shown) history.replaceState(null, "", pageUrl());
      analyse();
    });
  }
}
byId("views", HTMLElement).addEventListener("keydown", (event) => { // arrow keys move between the tabs
  /** @type {Record<string, number>} */
  const steps = { ArrowRight: 1, ArrowLeft: -1, Home: -VIEWS.length, End: VIEWS.length };
  const step = steps[event.key];
  if (step === undefined) return;
  event.preventDefault();
  const index = Math.min(VIEWS.length - 1, Math.max(0, VIEWS.indexOf(state.view) + step));
  byId(`tab-${VIEWS[index]}`, HTMLButtonElement).click();
});
for (const id of [...Object.keys(SETTINGS).filter((key) => key.startsWith("sort-")), "kwic-inline", "kwic-meta"]) {
  byId(id, HTMLElement).addEventListener("change", () => {
    showSortControls();
    settle(() => start({ again: false }));
  });
}
for (const id of Object.keys(SETTINGS).filter((key) => !key.startsWith("sort-") && !key.startsWith("kwic-"))) {
  byId(id, HTMLElement).addEventListener("change", () => {
    const view = ANALYSES.find((v) => id.startsWith(`${PREFIX[v]}-`));
    if (view) setTableOffset(view, 0); // another table: from its first row
    const other = DECLARED.find((d) => id.startsWith(`${d.name}-`));
    if (other) setDeclaredOffset(other.name, 0);
    if (state.shown) history.replaceState(null, "", pageUrl());
    settle(analyse);
  });
}
window.addEventListener("popstate", () => restore(new URLSearchParams(location.search)));
document.addEventListener("cowbird:as-cqp", () => { // CQP typed in Simple mode: the hint's one click
  part(document, 'input[name="syntax"][value="cqp"]', HTMLInputElement).checked = true;
  translate();
  void start();
});

fillSortLevels();
describeCorpus();
fillMoreCorpora();
rememberDefaults();
restore(new URLSearchParams(location.search));
translate();
loadHistory();
