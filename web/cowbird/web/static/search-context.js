// @ts-check
// Context in place: a concordance line widened under itself — more tokens each side, its sentence,
// its paragraph — from /api/v1/context, without leaving the concordance.

import { ApiProblem, getJson, problemText } from "./search-api.js";
import { CORPORA, fromTemplate, part } from "./search-dom.js";

/** @typedef {import("./api-types").LineContext} LineContext  GET /api/v1/context/{corpus}/{position}'s answer */

/** Tokens each side when a line is first widened, and what More and Less add or take. */
const FIRST = 30;
const STEP = 30;
/** The widest the server allows ([limits] max_line_context's default). */
const WIDEST = 100;

/**
 * The line's button that widens it in place (its row gets a row under it).
 * @param {HTMLTableRowElement} row
 * @param {import("./search-kwic.js").Hit} hit
 * @param {string[]} show  the attributes the concordance writes after each token's word: the context's tokens too
 * @param {number} index  the hit's number on the page (1-based), for screen readers
 */
export function widenable(row, hit, show, index) {
  const button = part(row, "button.widen", HTMLButtonElement);
  button.setAttribute("aria-label", `More context for hit ${index}`);
  button.setAttribute("aria-expanded", "false");
  button.addEventListener("click", () => {
    const open = row.nextElementSibling?.classList.contains("wide");
    if (open) close(row, button);
    else void widen(row, button, hit, show, { tokens: FIRST, region: null });
  });
}

/**
 * @param {HTMLTableRowElement} row
 * @param {HTMLButtonElement} button
 */
function close(row, button) {
  if (row.nextElementSibling?.classList.contains("wide")) row.nextElementSibling.remove();
  button.setAttribute("aria-expanded", "false");
  button.textContent = "+";
  button.focus();
}

/**
 * Shows (or updates) the widened context under the row.
 * @param {HTMLTableRowElement} row
 * @param {HTMLButtonElement} button
 * @param {import("./search-kwic.js").Hit} hit
 * @param {string[]} show
 * @param {{tokens: number, region: string | null}} asked
 */
async function widen(row, button, hit, show, asked) {
  const corpus = decodeURIComponent(hit.ref.split("?")[0].split("/")[2] ?? "");
  let wide = /** @type {HTMLTableRowElement | null} */ (row.nextElementSibling?.classList.contains("wide") ? row.nextElementSibling : null);
  if (!wide) {
    wide = fromTemplate("wide-row", HTMLTableRowElement);
    const id = `wide-${hit.position}`;
    part(wide, ".wide-context", HTMLElement).id = id;
    part(wide, ".wide-context", HTMLElement).setAttribute("aria-label", `Context of the hit at position ${hit.position}`);
    button.setAttribute("aria-controls", id);
    row.after(wide);
    controls(wide, row, button, hit, show);
  }
  // open from now on (not once the context came: closed meanwhile, it must stay closed)
  button.setAttribute("aria-expanded", "true");
  button.textContent = "−";
  const region = part(wide, ".wide-context", HTMLElement);
  region.setAttribute("aria-busy", "true");
  const params = new URLSearchParams({ tokens: String(asked.tokens) });
  if (hit.matchend !== hit.position) params.set("end", String(hit.matchend));
  // tokens each side run across texts (a text may be one sentence, shorter than the row), its edges marked
  params.set("region", asked.region || "none");
  const attributes = show.filter((a) => a !== "word");
  if (attributes.length) params.set("show", attributes.join(","));
  const text = part(wide, ".wide-text", HTMLElement);
  try {
    /** @type {LineContext} */
    const line = await getJson(`context/${encodeURIComponent(corpus)}/${hit.position}`, params);
    text.replaceChildren(...marked(line));
    const inText = line.region !== "s" && line.region !== "p"; // tokens each side
    wide.dataset.tokens = String(inText ? line.tokens : FIRST);
    part(wide, "button.more", HTMLButtonElement).disabled =
      inText && (line.tokens >= WIDEST || !(line.more_before || line.more_after));
    part(wide, "button.less", HTMLButtonElement).disabled = inText && line.tokens === 0;
    part(wide, ".wide-note", HTMLElement).textContent = note(line);
  } catch (error) {
    text.textContent = error instanceof ApiProblem ? problemText(error.problem) : String(error);
  } finally {
    region.removeAttribute("aria-busy");
  }
}

/**
 * The widened line's buttons: More and Less (tokens each side, inside the text), Sentence, Paragraph
 * (when the corpus has them) and Close.
 * @param {HTMLTableRowElement} wide
 * @param {HTMLTableRowElement} row
 * @param {HTMLButtonElement} button
 * @param {import("./search-kwic.js").Hit} hit
 * @param {string[]} show
 */
function controls(wide, row, button, hit, show) {
  const corpus = CORPORA.find((c) => c.name === decodeURIComponent(hit.ref.split("?")[0].split("/")[2] ?? ""));
  const regions = corpus?.s_attributes ?? [];
  const tokens = () => Number(wide.dataset.tokens || FIRST); // the last tokens-each-side shown (FIRST after a region)
  part(wide, "button.more", HTMLButtonElement).addEventListener("click", () =>
    void widen(row, button, hit, show, { tokens: Math.min(WIDEST, tokens() + STEP), region: null }));
  part(wide, "button.less", HTMLButtonElement).addEventListener("click", () =>
    void widen(row, button, hit, show, { tokens: Math.max(0, tokens() - STEP), region: null }));
  for (const [selector, name] of /** @type {const} */ ([["button.sentence", "s"], ["button.paragraph", "p"]])) {
    const regionButton = part(wide, selector, HTMLButtonElement);
    regionButton.hidden = !regions.includes(name);
    regionButton.addEventListener("click", () => void widen(row, button, hit, show, { tokens: WIDEST, region: name }));
  }
  part(wide, "button.close", HTMLButtonElement).addEventListener("click", () => close(row, button));
}

/**
 * The widened line's text: the match marked, and a sign where a text (‖) or a sentence (|) begins
 * or ends, with its name for screen readers.
 * @param {LineContext} line
 * @returns {(string | HTMLElement)[]}
 */
function marked(line) {
  const texts = new Set(line.breaks?.text ?? []);
  const sentences = new Set(line.breaks?.s ?? []);
  /** @type {(string | HTMLElement)[]} */
  const out = [line.more_before ? "… " : ""];
  /** @param {string[][]} tokens @param {number} first  the index of tokens[0] in the whole line */
  const add = (tokens, first, into = out) => {
    tokens.forEach((token, k) => {
      const at = first + k;
      if (at > 0) into.push(" ");
      if (texts.has(at) || sentences.has(at)) {
        const edge = document.createElement("span");
        edge.className = texts.has(at) ? "edge text" : "edge sentence";
        edge.title = texts.has(at) ? "another text" : "another sentence";
        edge.append(texts.has(at) ? "‖" : "|", Object.assign(document.createElement("span"), {
          className: "visually-hidden", textContent: texts.has(at) ? " another text " : " another sentence " }));
        into.push(edge, " ");
      }
      into.push(token.join("/"));
    });
  };
  add(line.left, 0);
  const mark = document.createElement("mark");
  /** @type {(string | HTMLElement)[]} */
  const inside = [];
  add(line.match, line.left.length, inside);
  if (line.left.length && inside[0] === " ") inside.shift();
  mark.append(...inside);
  out.push(line.left.length ? " " : "", mark);
  add(line.right, line.left.length + line.match.length);
  if (line.more_after) out.push(" …");
  return out;
}

/**
 * What the widened line shows, in words.
 * @param {LineContext} line
 */
function note(line) {
  const where = line.region === "s" ? "its sentence" : line.region === "p" ? "its paragraph"
    : `${line.tokens} tokens each side${line.region === "text" ? " inside its text" : ""}`;
  const edges = (line.breaks?.text ?? []).length ? " ‖ marks where another text begins or ends." : "";
  const cut = line.region === "s" || line.region === "p"
    ? (line.more_before || line.more_after ? `, cut at ${line.tokens} tokens each side` : "") : "";
  return `Showing ${where}${cut}.${edges}`;
}
