// What every view of the dashboard shares: the page's state, the host's JSON API, the
// rendering loop and small DOM and formatting helpers.
//
// Rendering is throttled: events only mark views dirty; one requestAnimationFrame callback
// redraws what changed, the latency-critical views first, and frames are at least
// FRAME_GAP_MS apart. Every frame costs the browser the same big part whatever changed
// (headless or not, it composites the whole window), and its processes share one CPU share
// of the machine with eight printing tabs: a frame per event starved them of it, and the
// events waited in the queue. At most ten frames a second, each with every event since.

export const state = {
  view: "tabs",
  live: false, // set once the stream is open; before that nothing refreshes on events
  tabs: new Map(), // name -> {name, shell, cwd, state, pid, last_run, preview, tail, cursor, index}
  focused: null,
  verify: null, // verify_status result
  verifyAvailable: true,
  verifyProblem: null,
  asked: null, // task id of the verify this page asked for, until it ends
  staleLive: null, // {changed, epoch} from verify.epoch.stale before the status catches up
  events: [],
  lastId: 0,
  bars: new Map(), // key -> {key, lane, label, start, end, result, kind}
  dirty: new Set(),
  rendered: 0, // highest event id in the table
  rungStarted: new Map(), // rung task id -> ms its environment.task.started was published
  unfolded: new Set(), // pre-existing folds the person opened, by rung task
};

export const $ = (id) => document.getElementById(id);

// ---- API ---------------------------------------------------------------------------------

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.field = body && body.field;
  }
}

// The session's CSRF token, which the host put into the page: every call that acts sends it
// (the cookie alone is refused, so a page on another loopback port cannot act through it).
const CSRF = document.querySelector('meta[name="habitat-csrf"]')?.getAttribute("content") || "";

export async function api(tool, args = {}) {
  const headers = { "Content-Type": "application/json" };
  if (CSRF) headers["X-Habitat-CSRF"] = CSRF;
  const response = await fetch(`/api/${tool}`, {
    method: "POST",
    headers,
    credentials: "same-origin",
    body: JSON.stringify(args),
  });
  let body = null;
  try {
    body = await response.json();
  } catch (_) {
    body = null;
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

export function say(id, text, bad = false) {
  const node = $(id);
  node.textContent = text;
  node.classList.toggle("bad", bad);
}

export function problem(err) {
  if (err instanceof ApiError && err.status === 404 && !err.field && /^HTTP 404$|Not Found/i.test(err.message))
    return "this host does not serve that API route (an older host?)";
  return err.message + (err.field ? ` (field: ${err.field})` : "");
}

// ---- rendering loop ------------------------------------------------------------------------

const renderers = []; // [view, fn(dirty)] in the order they draw
const FRAME_GAP_MS = 100;
let frame = 0; // a requested animation frame or the timer that will request it
let drawn = -Infinity; // when the last frame drew

export function onRender(view, fn) {
  renderers.push([view, fn]);
}

export function mark(...views) {
  for (const v of views) state.dirty.add(v);
  if (frame) return;
  const wait = drawn + FRAME_GAP_MS - performance.now();
  if (wait <= 0) frame = requestAnimationFrame(render);
  else frame = setTimeout(() => { frame = requestAnimationFrame(render); }, wait);
}

function render() {
  frame = 0;
  drawn = performance.now();
  const dirty = state.dirty;
  state.dirty = new Set();
  for (const [view, fn] of renderers) if (dirty.has(view)) fn(dirty);
}

// ---- DOM and formatting ---------------------------------------------------------------------

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

// Writing the same text again still replaces the text node and invalidates layout: skip it.
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

export function fmtDuration(s) {
  if (s === null || s === undefined) return "–";
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 120) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

const two = (n) => String(n).padStart(2, "0");

// HH:MM:SS local time by hand: toLocaleTimeString goes through Intl on every call, and the
// events table formats one per row.
export function fmtTime(ts) {
  const d = new Date(ts * 1000);
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
