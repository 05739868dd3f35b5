// The static link page: copy the citation; with Calf on the server, find the sentence on the web.
// A file of its own, not inline: the pages' Content-Security-Policy runs scripts from this site only.
"use strict";

document.getElementById("copy-citation").addEventListener("click", async (event) => {
  await navigator.clipboard.writeText(event.currentTarget.dataset.text);
  document.getElementById("copied").textContent = "Copied.";
});

const find = document.getElementById("find-on-web");
if (find) {
  find.addEventListener("click", async () => {
    const result = document.getElementById("web-result");
    const text = document.getElementById("web-text");
    find.disabled = true;
    result.textContent = "Looking for the page…";
    try {
      const answer = await fetch(find.dataset.url);
      const body = await answer.json();
      if (!answer.ok) {
        result.textContent = body.detail || body.title;
        return;
      }
      if (body.status === "found_url" || body.status === "found_search") {
        result.textContent = `Found (score ${body.score}${body.detail ? `, ${body.detail}` : ""}) on `;
        const link = document.createElement("a");
        link.href = body.source_url;
        link.textContent = body.source_url;
        link.rel = "noopener nofollow";
        result.append(link);
        const mark = document.createElement("mark");
        mark.textContent = body.page_text || body.sentence;
        text.replaceChildren(`… ${body.left} `, mark, ` ${body.right} …`);
        text.hidden = false;
      } else {
        result.textContent = body.status === "fetch_error"
          ? `The page could not be fetched: ${body.detail}` : `The sentence was not found on the web (${body.detail}).`;
      }
    } catch (error) {
      result.textContent = `The search failed: ${error.message}`;
    } finally {
      find.disabled = false;
    }
  });
}
