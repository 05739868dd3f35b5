// The workshop page (templates/workshop.html): start a crawl, watch each job's stages, stop, resume,
// publish and delete. It calls /api/v1/jobs (frontend_api/cowbird/frontend/routes/workshop.py) with the
// session's CSRF token, and polls the jobs every two seconds while any of them runs.

/** @typedef {import("./api-types").JobOut} Job  a job as GET /api/v1/jobs lists it */
/** @typedef {import("./api-types").NewJob} NewJob  POST /api/v1/jobs's body */

const LIVE = ["queued", "running", "stopping"];

/** @param {string} selector @returns {HTMLElement} */
function element(selector) {
  const found = document.querySelector(selector);
  if (!(found instanceof HTMLElement)) throw new Error(`the page has no ${selector}`);
  return found;
}

/** @returns {string} */
function csrf() {
  const input = document.querySelector('#logout input[name="csrf"]');
  return input instanceof HTMLInputElement ? input.value : "";
}

/** @param {string} path @param {string} method @param {unknown} [body] @returns {Promise<any>} */
async function call(path, method, body) {
  /** @type {Record<string, string>} */
  const headers = { "X-CSRF-Token": csrf(), Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin" });
  if (response.status === 204) return null;
  const answer = await response.json().catch(() => ({ detail: `${response.status} ${response.statusText}` }));
  if (!response.ok) throw new Error(answer.detail || `${response.status} ${response.statusText}`);
  return answer;
}

/** @param {string} text */
function say(text, isError = false) {
  const message = element("#form-message");
  message.textContent = text;
  message.className = isError ? "error" : "notice";
  message.setAttribute("role", isError ? "alert" : "status");
  message.hidden = false;
}

/** @param {number | null | undefined} share @returns {string} */
function percent(share) {
  return share === null || share === undefined ? "–" : `${(100 * share).toFixed(1)} %`;
}

/** @param {Job} job @returns {string} */
function summary(job) {
  const parts = [];
  if (job.kind === "crawl" && job.crawl) {
    const crawl = job.crawl;
    parts.push(`${(crawl.pages ?? 0).toLocaleString("en")} of ${(job.pages ?? 0).toLocaleString("en")} pages, ` +
      `${(crawl.good ?? 0).toLocaleString("en")} good documents (${percent(crawl.good_share)}), ` +
      `${(crawl.hosts ?? 0).toLocaleString("en")} hosts known, ${(crawl.queued ?? 0).toLocaleString("en")} URLs queued`);
  }
  if (job.build) {
    const removed = Object.entries(job.build.removed ?? {});
    if (removed.length) parts.push("removed: " + removed.map(([why, n]) => `${n.toLocaleString("en")} ${why}`).join(", "));
    if (job.build.tokens) parts.push(`${job.build.tokens.toLocaleString("en")} tokens`);
  }
  if (job.published) parts.push(`published as ${job.published}`);
  return parts.join("; ") || `${job.kind} job, language ${job.language ?? "?"}`;
}

/** @param {Job} job @param {HTMLElement} card */
function fill(job, card) {
  card.dataset.job = job.id;
  card.querySelector(".job-name")?.replaceChildren(job.name);
  const state = card.querySelector(".job-state");
  if (state) state.textContent = job.state;
  card.querySelector(".job-summary")?.replaceChildren(summary(job));
  const stages = card.querySelector(".stages");
  if (stages) {
    const names = job.kind === "crawl" ? ["crawl", "build"] : ["build"];
    stages.replaceChildren(...names.map((name) => {
      const item = document.createElement("li");
      let text = name;
      if (name === "build" && job.build && job.build.phases) {
        text += ": " + Object.entries(job.build.phases).map(([phase, how]) => `${phase} ${how}`).join(", ");
      }
      item.textContent = text;
      if (job.done.includes(name)) item.className = "done";
      else if (job.stage === name && LIVE.includes(job.state)) item.className = "current";
      return item;
    }));
  }
  const table = card.querySelector(".job-over-time");
  const parts = job.crawl_report ? job.crawl_report.good_share_over_time : [];
  if (table instanceof HTMLTableElement) {
    table.hidden = parts.length === 0;
    table.tBodies[0].replaceChildren(...parts.map((part, i) => {
      const row = document.createElement("tr");
      for (const value of [String(i + 1), part.pages.toLocaleString("en"), part.good.toLocaleString("en"),
        percent(part.good_share)]) {
        const cell = document.createElement("td");
        cell.textContent = value;
        row.append(cell);
      }
      return row;
    }));
  }
  const languages = job.crawl_report ? Object.entries(job.crawl_report.languages) : [];
  card.querySelector(".job-languages")?.replaceChildren(languages.length ?
    "Languages of the pages: " + languages.slice(0, 8).map(([code, n]) => `${code} ${n}`).join(", ") : "");
  const error = card.querySelector(".job-error");
  if (error instanceof HTMLElement) {
    error.hidden = !job.error;
    error.textContent = job.error ?? "";
  }
  const live = LIVE.includes(job.state);
  /** @param {string} selector @param {boolean} shown */
  const show = (selector, shown) => {
    const control = card.querySelector(selector);
    if (control instanceof HTMLElement) control.hidden = !shown;
  };
  show(".stop", live);
  show(".resume", !live && job.state !== "finished");
  show(".publish-controls", job.built && !job.published);
  show(".search-link", Boolean(job.published));
  show(".delete-corpus", Boolean(job.published));
  show(".delete-job", !live && !job.published);
  const link = card.querySelector(".search-link");
  if (link instanceof HTMLAnchorElement && job.published) {
    link.href = `/?corpus=${encodeURIComponent(job.published)}`;
    link.textContent = `Search ${job.published}`;
  }
  card.querySelector(".job-log")?.replaceChildren(job.log.join("\n"));
}

/** @type {Map<string, HTMLElement>} */
const cards = new Map();

/** @param {Job[]} jobs */
function render(jobs) {
  const list = element("#jobs");
  element("#no-jobs").hidden = jobs.length > 0;
  const template = element("#job-template");
  if (!(template instanceof HTMLTemplateElement)) return;
  const seen = new Set();
  jobs.forEach((job, index) => {
    let card = cards.get(job.id);
    if (!card) {
      const copy = template.content.firstElementChild?.cloneNode(true);
      if (!(copy instanceof HTMLElement)) return;
      card = copy;
      cards.set(job.id, card);
      wire(card);
    }
    fill(job, card);
    if (list.children[index] !== card) list.insertBefore(card, list.children[index] ?? null);
    seen.add(job.id);
  });
  for (const [id, card] of cards) {
    if (!seen.has(id)) {
      card.remove();
      cards.delete(id);
    }
  }
  schedule(jobs.some((job) => LIVE.includes(job.state)));
}

/** @param {HTMLElement} card */
function wire(card) {
  /** @param {string} selector @param {() => Promise<unknown>} action */
  const on = (selector, action) => card.querySelector(selector)?.addEventListener("click", () => {
    action().then(refresh).catch((/** @type {Error} */ error) => say(error.message, true));
  });
  const id = () => card.dataset.job ?? "";
  on(".stop", () => call(`/api/v1/jobs/${id()}/stop`, "POST"));
  on(".resume", () => call(`/api/v1/jobs/${id()}/resume`, "POST"));
  on(".publish", async () => {
    const access = card.querySelector(".access");
    /** @type {import("./api-types").Publish} */
    const publish = { access: access instanceof HTMLSelectElement ? access.value : "public" };
    /** @type {import("./api-types").PublishedCorpusOut} */
    const answer = await call(`/api/v1/jobs/${id()}/publish`, "POST", publish);
    say(`Published ${answer.name}: it is searched like any other corpus.`);
  });
  on(".delete-corpus", async () => {
    const name = card.querySelector(".job-name")?.textContent ?? "";
    if (!window.confirm(`Delete the corpus ${name}? Its files go, and nobody can search it any more.`)) return;
    await call(`/api/v1/corpora/${encodeURIComponent(name)}`, "DELETE");
  });
  on(".delete-job", async () => {
    if (!window.confirm("Delete this job and everything it fetched?")) return;
    await call(`/api/v1/jobs/${id()}`, "DELETE");
  });
}

/** @type {number | undefined} */
let timer;

/** @param {boolean} again */
function schedule(again) {
  window.clearTimeout(timer);
  if (again) timer = window.setTimeout(() => { refresh().catch(() => schedule(true)); }, 2000);
}

async function refresh() {
  /** @type {import("./api-types").JobList} */
  const answer = await call("/api/v1/jobs", "GET");
  render(answer.data);
}

element("#crawl-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  if (!(form instanceof HTMLFormElement)) return;
  const data = new FormData(form);
  const seeds = String(data.get("seeds") ?? "").split(/\s+/).filter((line) => line.length > 0);
  /** @type {NewJob} */
  const crawl = { kind: "crawl", name: String(data.get("name") ?? ""), seeds,
    language: String(data.get("language") ?? "de"), pages: Number(data.get("pages") ?? 1000) };
  call("/api/v1/jobs", "POST", crawl)
    .then((/** @type {Job} */ job) => { say(`Started ${job.name}.`); form.reset(); return refresh(); })
    .catch((/** @type {Error} */ error) => say(error.message, true));
});

/** @param {File} file @returns {Promise<string>} the upload's id */
async function upload(file) {
  const response = await fetch("/api/v1/uploads", { method: "POST", body: file, credentials: "same-origin",
    headers: { "X-CSRF-Token": csrf(), "X-File-Name": encodeURIComponent(file.name), Accept: "application/json",
      "Content-Type": "application/octet-stream" } });
  /** @type {unknown} */
  const answer = await response.json().catch(() => ({ detail: `${response.status} ${response.statusText}` }));
  if (!response.ok) {
    const problem = /** @type {Partial<import("./api-types").Problem>} */ (answer);
    throw new Error(`${file.name}: ${problem.detail || response.statusText}`);
  }
  return /** @type {import("./api-types").UploadOut} */ (answer).id;
}

element("#build-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  if (!(form instanceof HTMLFormElement)) return;
  const data = new FormData(form);
  const files = data.getAll("files").filter((item) => item instanceof File && item.size > 0);
  const inputs = data.getAll("inputs").map(String);
  (async () => {
    /** @type {string[]} */
    const uploads = [];
    for (const [i, file] of files.entries()) {
      if (!(file instanceof File)) continue;
      say(`Uploading ${file.name} (${i + 1} of ${files.length}) …`);
      uploads.push(await upload(file));
    }
    /** @type {NewJob} */
    const build = { kind: "build", name: String(data.get("name") ?? ""), language: String(data.get("language") ?? "de"),
      uploads, inputs };
    /** @type {Job} */
    const job = await call("/api/v1/jobs", "POST", build);
    say(`Started ${job.name}.`);
    form.reset();
    await refresh();
  })().catch((/** @type {Error} */ error) => say(error.message, true));
});

render(JSON.parse(element("#jobs-data").textContent ?? "[]"));
