// @ts-check
// The public API as the search page calls it: one request of each kind in flight (a new one aborts
// the last), and errors as the API states them (application/problem+json), which the page shows
// with their `detail`.

import { setRequest, state } from "./search-state.js";

/**
 * An error as the API answers it (RFC 9457 and a stable code; a query error says where it is), its
 * members as the server's model names them (./api-types.d.ts), each of which may be missing: the
 * page makes some problems itself (a response that is not problem+json, a form left incomplete).
 * @typedef {Partial<import("./api-types").Problem>} Problem
 */

/** A request the API refused: its problem+json. */
export class ApiProblem extends Error {
  /** @param {Problem} problem */
  constructor(problem) {
    super(problemText(problem));
    this.name = "ApiProblem";
    /** @type {Problem} */
    this.problem = problem;
  }
}

/**
 * A problem in words: its detail, else its title.
 * @param {Problem} problem
 * @param {string} [fallback]
 */
export function problemText(problem, fallback = "the request failed") {
  return problem.detail || problem.title || fallback;
}

/**
 * Whether an error is a request aborted (by a newer request of its kind, or by the user).
 * @param {unknown} error
 */
export function aborted(error) {
  return typeof error === "object" && error !== null && "name" in error
    && /** @type {{name: unknown}} */ (error).name === "AbortError";
}

/**
 * The signal of a new request of this kind: the one in flight, if any, is aborted.
 * @param {import("./search-state.js").RequestKind} kind
 * @returns {AbortSignal}
 */
export function begin(kind) {
  state.requests[kind]?.abort();
  const controller = new AbortController();
  setRequest(kind, controller);
  return controller.signal;
}

/**
 * Aborts the request of this kind in flight, if any.
 * @param {import("./search-state.js").RequestKind} kind
 */
export function cancel(kind) {
  state.requests[kind]?.abort();
}

/**
 * The request of this kind has ended (unless a newer one has taken its place).
 * @param {import("./search-state.js").RequestKind} kind
 * @param {AbortSignal} signal
 */
export function end(kind, signal) {
  if (state.requests[kind]?.signal === signal) setRequest(kind, null);
}

/**
 * The request of this kind goes on in the background: a newer request of the kind no longer aborts
 * it. Its controller (null if a newer one has taken its place already).
 * @param {import("./search-state.js").RequestKind} kind
 * @param {AbortSignal} signal
 * @returns {AbortController | null}
 */
export function detach(kind, signal) {
  const controller = state.requests[kind];
  if (!controller || controller.signal !== signal) return null;
  setRequest(kind, null);
  return controller;
}

/**
 * Whether this request of this kind is still in flight (not ended, nor overtaken by a newer one).
 * @param {import("./search-state.js").RequestKind} kind
 */
export function busy(kind) {
  return state.requests[kind] !== null;
}

/**
 * GET /api/v1/`path`?`params`: the response, if it is a success; else throws its ApiProblem.
 * @param {string} path  e.g. "query", "export"
 * @param {URLSearchParams} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<Response>}
 */
export async function get(path, params, signal) {
  const query = params.toString();
  const answer = await fetch(query ? `${apiUrl(path)}?${query}` : apiUrl(path), { signal });
  if (!answer.ok) throw new ApiProblem(await problemOf(answer));
  return answer;
}

/**
 * GET /api/v1/`path`?`params` answered with JSON (of the type the caller names).
 * @template T
 * @param {string} path
 * @param {URLSearchParams} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<T>}
 */
export async function getJson(path, params, signal) {
  const answer = await get(path, params, signal);
  return /** @type {T} */ (await answer.json());
}

/**
 * GET /api/v1/`path`?`params` answered with NDJSON (application/x-ndjson, one JSON object a line):
 * each line's object as soon as it has come, read from the body as it streams in. A refusal
 * before the stream starts throws its ApiProblem, as `get` does; an abort (`signal`) throws an
 * AbortError while the body is read. A JSON answer (not a stream) is one object.
 * @template T
 * @param {string} path
 * @param {URLSearchParams} params
 * @param {AbortSignal} [signal]
 * @returns {AsyncGenerator<T, void, undefined>}
 */
export async function* getLines(path, params, signal) {
  const answer = await get(path, params, signal);
  if (!/\bndjson\b/.test(answer.headers.get("content-type") || "") || !answer.body) {
    yield /** @type {T} */ (await answer.json());
    return;
  }
  const reader = answer.body.getReader();
  const decoder = new TextDecoder();
  let rest = ""; // the last line, until its end has come
  let done = false;
  try {
    while (!done) {
      const chunk = await reader.read();
      done = chunk.done;
      rest += done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      const lines = rest.split("\n");
      rest = done ? "" : lines.pop() ?? "";
      for (const line of lines) if (line.trim()) yield /** @type {T} */ (JSON.parse(line));
    }
  } finally {
    if (!done) reader.cancel().catch(() => {}); // the caller stopped reading (or it failed): the stream is dropped
  }
}

/** @param {string} path */
export function apiUrl(path) {
  return `/api/v1/${path}`;
}

/**
 * The problem+json of a failed response (a response that is not one, from a proxy say, in its words).
 * @param {Response} answer
 * @returns {Promise<Problem>}
 */
async function problemOf(answer) {
  const type = answer.headers.get("content-type") || "";
  if (/\bjson\b/.test(type)) {
    try {
      return /** @type {Problem} */ (await answer.json());
    } catch {
      // not JSON after all: said below
    }
  }
  return { status: answer.status, title: `HTTP ${answer.status}${answer.statusText ? ` ${answer.statusText}` : ""}` };
}
