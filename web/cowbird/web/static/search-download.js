// @ts-check
// The download dialog: the hits shown as they are shown (their sample, or their order) with the
// attributes, metadata, context and format chosen, up to the browser's limit — or, for more, the
// curl line of the same request through the API. The file streams in with its progress in rows.

import { ApiProblem, aborted, apiUrl, begin, busy, cancel, end, get, problemText } from "./search-api.js";
import { byId, corpusInfo, fromTemplate, number, part } from "./search-dom.js";
import { GDEX_CONTEXT, exportRequest, state } from "./search-state.js";

/** @typedef {import("./search-state.js").ExportChoices} ExportChoices */

const dialog = byId("download", HTMLDialogElement);
/** Hits the browser may download; more go through the API (the curl line). */
const BROWSER_LIMIT = Number(dialog.dataset.browserLimit);
/** Hits one API request may export. */
const API_LIMIT = Number(dialog.dataset.apiLimit);
/** @type {Readonly<Record<string, string>>} */
const REGION_NAMES = { s: "the whole sentence (s)", p: "the whole paragraph (p)" };

const LF = 0x0a;
const QUOTE = 0x22;
const HASH = 0x23;

/**
 * Counts the rows of a TSV or CSV file (RFC 4180, as /api/v1/export writes them) as its bytes come:
 * a row ends at a line break outside quotes — a quoted cell may hold line breaks, and a quote inside
 * one is doubled — and neither the provenance block's "#" lines nor the header are rows. (Quotes and
 * line breaks are single bytes that never occur inside another UTF-8 character.)
 */
export class RowCounter {
  constructor() {
    /** Rows ended so far. */
    this.rows = 0;
    /** Inside a quoted cell. */
    this.quoted = false;
    /** At the first byte of a line. */
    this.lineStart = true;
    /** In a "#" line of the provenance block. */
    this.comment = false;
    /** Before the end of the header (where "#" lines may come). */
    this.beforeData = true;
  }

  /** @param {Uint8Array} bytes  the next bytes of the file */
  feed(bytes) {
    for (const byte of bytes) {
      if (this.comment) {
        if (byte === LF) {
          this.comment = false;
          this.lineStart = true;
        }
        continue;
      }
      if (this.lineStart) {
        this.lineStart = false;
        if (this.beforeData && byte === HASH) {
          this.comment = true;
          continue;
        }
      }
      if (byte === QUOTE) this.quoted = !this.quoted;
      else if (byte === LF && !this.quoted) {
        if (this.beforeData) this.beforeData = false; // the header
        else this.rows += 1;
        this.lineStart = true;
      }
    }
  }
}

/** Opens the dialog for the hits shown. */
export function openDownload() {
  const shown = state.shown;
  if (!shown) return;
  const info = corpusInfo();
  byId("dl-show", HTMLElement).replaceChildren(...info.p_attributes.filter((a) => a !== "word").map((a) => choice("show", a, a === "lemma")));
  byId("dl-meta", HTMLElement).replaceChildren(...info.meta.map((a) => choice("meta", a, /url|id$/.test(a))));
  // a region as context: the sentence is what Calf needs (with the page's URL) to find a line on the web
  const regions = info.s_attributes.filter((a) => !info.meta.includes(a) && a !== "text");
  const kind = byId("dl-context-kind", HTMLSelectElement);
  const kept = kind.value;
  kind.replaceChildren(new Option("tokens each side", "tokens"),
    ...regions.map((r) => new Option(REGION_NAMES[r] || `the whole ${r} region`, r)));
  kind.value = [...kind.options].some((o) => o.value === kept) ? kept : "tokens";
  // sorted by GDEX: each line is the sentence it was scored on, as in the page
  if (state.shown?.order?.sort === "gdex" && regions.includes(GDEX_CONTEXT)) kind.value = GDEX_CONTEXT;
  const sample = shown.sample;
  const rows = byId("dl-rows", HTMLInputElement);
  rows.disabled = Boolean(sample);
  rows.value = String(sample ? Math.min(shown.total, sample.size) : Math.min(BROWSER_LIMIT, shown.total || 1));
  byId("dl-what", HTMLElement).textContent = sample
    ? `The random sample shown: ${Math.min(sample.size, shown.total)} of ${number(shown.total)} hits, drawn with seed ${sample.seed}.`
    : `The hits in ${shown.order ? "the order shown" : "corpus order"}, from the first; ${number(shown.total)} in all.`;
  byId("dl-progress", HTMLElement).textContent = "";
  showContextKind();
  checkRows();
  updateCurl();
  dialog.showModal();
}

/**
 * A checkbox framed with its name (from the page's #choice-template).
 * @param {string} group
 * @param {string} name
 * @param {boolean} checked
 */
function choice(group, name, checked) {
  const label = fromTemplate("choice-template", HTMLLabelElement);
  const box = part(label, "input", HTMLInputElement);
  box.name = group;
  box.value = name;
  box.checked = checked;
  box.addEventListener("change", updateCurl);
  part(label, "span", HTMLElement).textContent = name;
  return label;
}

function showContextKind() {
  const tokens = byId("dl-context-kind", HTMLSelectElement).value === "tokens";
  const context = byId("dl-context", HTMLInputElement);
  context.hidden = !tokens;
  context.disabled = !tokens;
  const url = corpusInfo().meta.find((m) => /_url$/.test(m));
  const calf = byId("dl-calf", HTMLElement);
  calf.hidden = tokens || !url;
  if (url) calf.textContent = `With ${url} ticked, each line of this file is a sentence Calf can find on its web page.`;
}

/**
 * The dialog's choices.
 * @param {number | null} limit  the hits asked for
 * @returns {ExportChoices}
 */
function choices(limit) {
  /** @param {string} selector */
  const ticked = (selector) => [...document.querySelectorAll(selector)]
    .filter((box) => box instanceof HTMLInputElement && box.checked)
    .map((box) => /** @type {HTMLInputElement} */ (box).value);
  const kind = byId("dl-context-kind", HTMLSelectElement).value;
  return {
    show: ticked('#dl-show input[name="show"]'),
    meta: ticked('#dl-meta input[name="meta"]'),
    context: kind === "tokens" ? byId("dl-context", HTMLInputElement).value || "10" : kind,
    format: byId("dl-format", HTMLSelectElement).value,
    provenance: byId("dl-provenance", HTMLInputElement).checked,
    limit,
  };
}

/** @returns {boolean} whether the browser may download the hits asked for (said when not) */
function checkRows() {
  const field = byId("dl-rows", HTMLInputElement);
  const rows = Number(field.value);
  const bad = !state.shown?.sample && (!Number.isInteger(rows) || rows < 1 || rows > BROWSER_LIMIT);
  const error = byId("dl-rows-error", HTMLElement);
  error.hidden = !bad;
  error.textContent = bad ? (rows > BROWSER_LIMIT
    ? `At most ${number(BROWSER_LIMIT)} hits in the browser; for more, use the API (the curl line below).`
    : "Give a whole number of hits, at least 1.") : "";
  field.setAttribute("aria-invalid", String(bad));
  byId("dl-start", HTMLButtonElement).disabled = bad || busy("download");
  return !bad;
}

/** The curl line: the same download through the API, every hit up to the API's limit. */
function updateCurl() {
  const shown = state.shown;
  if (!shown) return;
  const params = exportRequest(shown, choices(Math.max(1, Math.min(API_LIMIT, shown.total))));
  byId("dl-curl", HTMLElement).textContent =
    `curl -fsS -OJ -H "Authorization: Bearer $COWBIRD_TOKEN" '${location.origin}${apiUrl("export")}?${params}'`;
}

/** @param {number} bytes */
const kilobytes = (bytes) => `${number(Math.round(bytes / 1024))} KB`;

async function startDownload() {
  const shown = state.shown;
  if (!shown || !checkRows()) return;
  const chosen = choices(Number(byId("dl-rows", HTMLInputElement).value));
  const params = exportRequest(shown, chosen);
  const signal = begin("download");
  const progress = byId("dl-progress", HTMLElement);
  progress.textContent = "Starting…";
  byId("dl-start", HTMLButtonElement).disabled = true;
  byId("dl-cancel", HTMLButtonElement).hidden = false;
  try {
    const answer = await get("export", params, signal);
    const total = Number(answer.headers.get("x-cowbird-rows") || 0);
    const size = Number(answer.headers.get("content-length") || 0); // none while the file streams
    // a spreadsheet is delivered whole at its end: its bytes say how far it has come, not its rows
    const counter = chosen.format === "tsv" || chosen.format === "csv" ? new RowCounter() : null;
    if (!counter) progress.textContent = `Making a spreadsheet of ${number(total)} rows…`;
    if (!answer.body) throw new Error("the response has no body");
    const reader = answer.body.getReader();
    /** @type {BlobPart[]} */
    const chunks = [];
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.length;
      const received = size ? `${kilobytes(bytes)} of ${kilobytes(size)}` : kilobytes(bytes);
      if (counter) {
        counter.feed(value);
        progress.textContent = `${number(Math.min(counter.rows, total))} of ${number(total)} rows (${received})`;
      } else progress.textContent = `A spreadsheet of ${number(total)} rows: ${received} received`;
    }
    const name = /filename="([^"]+)"/.exec(answer.headers.get("content-disposition") || "")?.[1] || "cowbird-export";
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob(chunks, { type: answer.headers.get("content-type") || "" }));
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    progress.textContent = `Saved ${name}`;
  } catch (error) {
    if (error instanceof ApiProblem) progress.textContent = problemText(error.problem, "the download failed");
    else if (aborted(error)) progress.textContent = "Download cancelled.";
    else progress.textContent = `The download failed: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    end("download", signal);
    byId("dl-cancel", HTMLButtonElement).hidden = true;
    checkRows();
  }
}

function closeDownload() {
  cancel("download");
  dialog.close();
}

/** Wires the dialog's controls. */
export function setUpDownload() {
  byId("dl-start", HTMLButtonElement).addEventListener("click", startDownload);
  byId("dl-cancel", HTMLButtonElement).addEventListener("click", () => cancel("download"));
  byId("dl-close", HTMLButtonElement).addEventListener("click", closeDownload);
  dialog.addEventListener("cancel", () => cancel("download")); // Escape
  byId("dl-rows", HTMLInputElement).addEventListener("input", () => {
    checkRows();
    updateCurl();
  });
  byId("dl-context", HTMLInputElement).addEventListener("input", updateCurl);
  byId("dl-context-kind", HTMLSelectElement).addEventListener("change", () => {
    showContextKind();
    updateCurl();
  });
  byId("dl-format", HTMLSelectElement).addEventListener("change", updateCurl);
  byId("dl-provenance", HTMLInputElement).addEventListener("change", updateCurl);
}
