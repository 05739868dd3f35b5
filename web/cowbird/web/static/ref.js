// @ts-check
// The static link page: copy the citation; with Calf on the server, find the sentence on the web.
// A file of its own, not inline: the pages' Content-Security-Policy runs scripts from this site only.
"use strict";

/** @typedef {import("./api-types").WebContext} WebContext  Calf's answer (GET /api/v1/ref/<corpus>/<position>/web) */
/** @typedef {import("./api-types").Problem} Problem  its refusal (problem+json) */

const copy = document.getElementById("copy-citation");
if (copy instanceof HTMLButtonElement) {
  copy.addEventListener("click", async () => {
    const copied = document.getElementById("copied");
    try {
      await navigator.clipboard.writeText(copy.dataset.text ?? "");
      if (copied) copied.textContent = "Copied.";
    } catch {  // no Clipboard API here (plain HTTP from another host): the citation selected for Ctrl+C
      const citation = document.getElementById("citation");
      if (citation) getSelection()?.selectAllChildren(citation);
      if (copied) copied.textContent = "Press Ctrl+C to copy the selected citation.";
    }
  });
}

const find = document.getElementById("find-on-web");
const result = document.getElementById("web-result");
const text = document.getElementById("web-text");
if (find instanceof HTMLButtonElement && result && text) {
  find.addEventListener("click", async () => {
    find.disabled = true;
    result.textContent = "Looking for the page…";
    try {
      const answer = await fetch(find.dataset.url ?? "");
      /** @type {unknown} */
      const answered = await answer.json();
      if (!answer.ok) {
        const problem = /** @type {Partial<Problem>} */ (answered);
        result.textContent = problem.detail || problem.title || "the search failed";
        return;
      }
      const body = /** @type {WebContext} */ (answered);
      if (body.status === "found_url" || body.status === "found_search" || body.status === "found_archive") {
        const archived = body.status === "found_archive";
        const how = `score ${body.score}${body.detail ? `, ${body.detail}` : ""}`;
        result.textContent = archived
          ? `Found in the web archive ${body.source} (${how}), in its capture of ${(body.capture_date ?? "").slice(0, 10)}: `
          : `Found (${how}) on `;
        const link = document.createElement("a");
        link.href = archived ? body.capture_url ?? "" : body.source_url;
        link.textContent = body.source_url;  // the page as it was; the link goes to its capture
        link.rel = "noopener nofollow";
        result.append(link);
        const mark = document.createElement("mark");
        mark.textContent = body.page_text || body.sentence;
        text.replaceChildren(`… ${body.left} `, mark, ` ${body.right} …`);
        text.hidden = false;
      } else if (body.status.startsWith("changed_")) {
        // the sentence is there, the word searched for is not: its context is not the hit's
        result.textContent = `The sentence was found with other words where the hit was (${body.detail}), so it `
          + "is not shown as found.";
      } else {
        result.textContent = body.status === "fetch_error"
          ? `The page could not be fetched: ${body.detail}` : `The sentence was not found on the web (${body.detail}).`;
      }
    } catch (error) {
      result.textContent = `The search failed: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      find.disabled = false;
    }
  });
}
