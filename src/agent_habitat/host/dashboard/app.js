// The agent-habitat dashboard: one page, live through /events (SSE), acting through the
// host's JSON API (POST /api/<tool>). No build step, nothing fetched from elsewhere.
// Rendering is throttled: events only mark views dirty; one requestAnimationFrame
// callback redraws what changed. Tails and lists are bounded so 8 tabs printing at full
// speed cannot grow the page without limit.
"use strict";

const TAIL_CHARS = 8000; // live tail kept per tab
const TAIL_LINES = 120;
const EVENTS_KEPT = 2000; // journal rows kept in memory
const EVENTS_SHOWN = 300; // rows in the table
const RUNGS_KEPT = 100; // start times of rung tasks kept for their elapsed time
const TIMELINE_KEPT = 3600 * 1000; // ms: the last hour
const POLL_MS = 400; // live tail refresh of a running tab (while the Tabs view shows)
const OMITTED = /\n… \[\d+ bytes omitted; full output in the spool\] …\n/;
const POLICIES = ["minimal", "standard", "strict", "ci_parity"];

const state = {
  view: "tabs",
  tabs: new Map(), // name -> {name, shell, cwd, state, pid, last_run, preview, tail, cursor, index}
  focused: null,
  verify: null, // verify_status result
  verifyAvailable: true,
  staleLive: null, // {changed, epoch} from verify.epoch.stale before the status catches up
  events: [],
  lastId: 0,
  bars: new Map(), // key -> {key, lane, label, start, end, result, kind}
  dirty: new Set(),
  rendered: 0, // highest event id in the table
  rungStarted: new Map(), // rung task id -> ms its environment.task.started was published
  unfolded: new Set(), // pre-existing folds the person opened, by rung task
  verifyProblem: null,
};

const $ = (id) => document.getElementById(id);

// ---- API ---------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.field = body && body.field;
  }
}

async function api(tool, args = {}) {
  const response = await fetch(`/api/${tool}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
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

function say(id, text, bad = false) {
  const el = $(id);
  el.textContent = text;
  el.classList.toggle("bad", bad);
}

function problem(err) {
  if (err instanceof ApiError && err.status === 404 && !err.field && /^HTTP 404$|Not Found/i.test(err.message))
    return "this host does not serve that API route (an older host?)";
  return err.message + (err.field ? ` (field: ${err.field})` : "");
}

// ---- rendering loop ------------------------------------------------------------------------

let frame = 0;
function mark(...views) {
  for (const v of views) state.dirty.add(v);
  if (!frame) frame = requestAnimationFrame(render);
}

function render() {
  frame = 0;
  const dirty = state.dirty;
  state.dirty = new Set();
  if (dirty.has("tabs")) renderTabs();
  if (dirty.has("verify")) renderVerify();
  if (dirty.has("timeline") && state.view === "timeline") renderTimeline();
  if (dirty.has("events")) renderEvents(dirty.has("events-all"));
  if (dirty.has("timeline") && state.view !== "timeline") state.pendingTimeline = true;
}

function el(tag, attrs = {}, ...children) {
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

function fmtDuration(s) {
  if (s === null || s === undefined) return "–";
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 120) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

function fmtTime(ts) {
  return new Date(ts * 1000).toLocaleTimeString([], { hour12: false });
}

// ---- tabs ----------------------------------------------------------------------------------

const RESULT_GLYPH = { ok: "✓", bad: "✗", stop: "■", run: "▶", lost: "?" };

function runResult(run) {
  if (!run) return null;
  if (run.state === "running") return "run";
  if (run.state === "exited") return run.exit_code === 0 ? "ok" : "bad";
  if (run.state === "lost") return "lost";
  return "stop";
}

function runText(run) {
  if (!run) return "no run yet";
  if (run.state === "running") return "running";
  if (run.state === "exited") return `exit ${run.exit_code}`;
  return run.state.replace("_", " ");
}

function renderTabs() {
  const list = $("tab-list");
  const names = [...state.tabs.keys()].sort((a, b) => (a === "main" ? -1 : b === "main" ? 1 : a.localeCompare(b)));
  $("tabs-empty").hidden = names.length > 0;
  const seen = new Set();
  names.forEach((name, i) => {
    const tab = state.tabs.get(name);
    seen.add(name);
    let card = list.querySelector(`li[data-tab="${CSS.escape(name)}"]`);
    if (!card) {
      card = buildTabCard(name);
      list.append(card);
    }
    if (list.children[i] !== card) list.insertBefore(card, list.children[i]);
    fillTabCard(card, tab, i);
  });
  for (const card of [...list.children]) if (!seen.has(card.dataset.tab)) card.remove();
}

function buildTabCard(name) {
  const id = `tab-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const card = el("li", { class: "tab", "data-tab": name, tabindex: "0", "aria-labelledby": `${id}-name` });
  card.addEventListener("focus", () => { state.focused = name; });
  const head = el("div", { class: "tab-head" },
    el("h3", { id: `${id}-name`, class: "tab-name" }),
    el("span", { class: "tab-state", role: "status" }));
  const meta = el("dl", { class: "tab-meta" },
    el("dt", { text: "cwd" }), el("dd", { class: "tab-cwd" }),
    el("dt", { text: "last" }), el("dd", { class: "tab-cmd" }),
    el("dt", { text: "result" }), el("dd", { class: "tab-result" }));
  const tail = el("pre", { class: "tail", tabindex: "0", role: "log", "aria-live": "off", "aria-label": `output of tab ${name}` });
  const actions = el("div", { class: "tab-actions", role: "group", "aria-label": `actions for tab ${name}` },
    el("button", { type: "button", class: "kill", text: "Kill", "aria-label": `Kill the command in tab ${name}`, onclick: () => act("shell_kill", name) }),
    el("button", { type: "button", class: "rerun", text: "Rerun", "aria-label": `Rerun the last command in tab ${name}`, onclick: () => act("shell_rerun", name) }),
    el("button", { type: "button", class: "close", text: "Close", "aria-label": `Close tab ${name}`, onclick: () => act("shell_close", name) }));
  card.append(head, meta, tail, actions);
  return card;
}

function fillTabCard(card, tab, i) {
  const run = tab.last_run;
  const result = tab.state === "running" ? "run" : runResult(run);
  card.dataset.state = tab.state;
  card.dataset.result = result || "none";
  card.querySelector(".tab-name").textContent = `${i + 1} · ${tab.name}`;
  const st = card.querySelector(".tab-state");
  st.textContent = `${RESULT_GLYPH[result] || "·"} ${tab.state}${tab.pid && tab.state === "running" ? ` (pid ${tab.pid})` : ""}`;
  st.className = `tab-state r-${result || "none"}`;
  card.querySelector(".tab-cwd").textContent = tab.cwd || "–";
  card.querySelector(".tab-cmd").textContent = run ? `#${run.index} ${run.command}` : "–";
  card.querySelector(".tab-result").textContent = run
    ? `${runText(run)}${run.state !== "running" ? ` · ${fmtDuration(run.duration_s)}` : ""}`
    : "–";
  const tail = card.querySelector(".tail");
  const text = tab.tail || tab.preview || "";
  if (tail.textContent !== text) {
    const atBottom = tail.scrollTop + tail.clientHeight >= tail.scrollHeight - 4;
    tail.textContent = text;
    if (atBottom) tail.scrollTop = tail.scrollHeight;
  }
  card.querySelector(".kill").disabled = tab.state !== "running";
  card.querySelector(".rerun").disabled = !run || tab.state === "running";
}

function boundTail(text) {
  if (text.length > TAIL_CHARS) text = text.slice(text.length - TAIL_CHARS);
  const lines = text.split("\n");
  if (lines.length > TAIL_LINES) text = lines.slice(lines.length - TAIL_LINES).join("\n");
  return text;
}

async function act(tool, tab) {
  say("tabs-message", `${tool.replace("shell_", "")} ${tab}…`);
  try {
    const args = tool === "shell_rerun" ? { tab, background: true } : { tab };
    const result = await api(tool, args);
    const what = tool === "shell_kill"
      ? (result.killed ? `killed ${tab} (pids ${result.pids.join(", ")})` : `nothing was running in ${tab}`)
      : tool === "shell_close" ? `closed ${tab}` : `reran in ${tab}: #${result.index} ${result.command}`;
    say("tabs-message", what);
  } catch (err) {
    say("tabs-message", `${tool.replace("shell_", "")} ${tab}: ${problem(err)}`, true);
  }
  refreshScene();
}

let sceneBusy = false;
let sceneAgain = false;
async function refreshScene() {
  if (sceneBusy) { sceneAgain = true; return; }
  sceneBusy = true;
  try {
    const scene = await api("shell_scene", {});
    const names = new Set();
    for (const t of scene.tabs) {
      names.add(t.name);
      const old = state.tabs.get(t.name);
      const keepTail = old && old.last_run && t.last_run && old.index === t.last_run.index;
      state.tabs.set(t.name, {
        ...t,
        tail: keepTail ? old.tail : "",
        cursor: keepTail ? old.cursor : 0,
        index: t.last_run ? t.last_run.index : null,
      });
    }
    for (const name of [...state.tabs.keys()]) if (!names.has(name)) state.tabs.delete(name);
    mark("tabs");
  } catch (err) {
    say("tabs-message", `scene: ${problem(err)}`, true);
  } finally {
    sceneBusy = false;
    if (sceneAgain) { sceneAgain = false; refreshScene(); }
  }
}

const tailBusy = new Set();
// `last` with only `since` reads a head and a tail of the new bytes (bounded work on the
// host however fast the tab prints); the head is dropped when bytes were left out.
async function pollTails() {
  if (state.view !== "tabs" || document.hidden) return;
  for (const tab of state.tabs.values()) {
    if (tab.state !== "running" || tailBusy.has(tab.name)) continue;
    tailBusy.add(tab.name);
    api("shell_last", { tab: tab.name, since: tab.cursor || 0 })
      .then((r) => {
        const cur = state.tabs.get(tab.name);
        if (!cur || cur.index !== r.index) return;
        const fresh = r.omitted_bytes > 0
          ? `… [${r.omitted_bytes} bytes skipped] …\n${r.output.split(OMITTED).pop()}`
          : r.output;
        cur.tail = boundTail(r.omitted_bytes > 0 ? fresh : (cur.tail || "") + fresh);
        cur.cursor = r.cursor;
        mark("tabs");
      })
      .catch(() => {})
      .finally(() => tailBusy.delete(tab.name));
  }
}

// ---- verify ---------------------------------------------------------------------------------

let verifyBusy = false;
let verifyAgain = false;
async function refreshVerify() {
  if (!state.verifyAvailable) return;
  if (verifyBusy) { verifyAgain = true; return; }
  verifyBusy = true;
  try {
    state.verify = await api("verify_status", {});
    state.verifyProblem = null;
    state.staleLive = null;
    mark("verify", "timeline");
  } catch (err) {
    // 404: this host has no verify API; 409: no project is open. Either way say so, never
    // leave the view on "loading".
    if (err instanceof ApiError && err.status === 404) state.verifyAvailable = false;
    state.verifyProblem = problem(err);
    mark("verify");
  } finally {
    verifyBusy = false;
    if (verifyAgain) { verifyAgain = false; refreshVerify(); }
  }
}

async function verify() {
  const policy = $("verify-policy").value;
  say("verify-message", `verify (${policy})…`);
  try {
    const r = await api("verify_run", { policy });
    say("verify-message", r.summary || `${r.state}: epoch ${r.epoch} (${r.task})`);
    state.verifyAvailable = true;
  } catch (err) {
    say("verify-message", `verify: ${problem(err)}`, true);
  }
  refreshVerify();
}

async function cancelVerify() {
  say("verify-message", "cancel…");
  try {
    const r = await api("verify_cancel", {});
    say("verify-message", r.summary || (r.cancelled ? "cancelled" : "nothing to cancel"));
  } catch (err) {
    say("verify-message", `cancel: ${problem(err)}`, true);
  }
  refreshVerify();
}

const STATE_GLYPH = {
  green: "✓", red: "✗", running: "▶", waiting: "…", queued: "…", skipped: "–", error: "!",
  cancelled: "■", died: "☠", stale: "⚠", incomplete: "?", nothing_to_verify: "∅", lost: "?",
};

function staleInfo() {
  const v = state.verify;
  if (state.staleLive) return state.staleLive;
  if (v && v.stale) return { changed: v.changed || [], epoch: v.epoch && v.epoch.epoch, snapshot: v.epoch && v.epoch.snapshot, current: v.current_snapshot };
  return null;
}

function renderStale() {
  const banner = $("stale");
  const info = staleInfo();
  banner.hidden = !info;
  if (!info) return;
  const files = info.changed.length ? info.changed.join(", ") : "files of its set";
  const snap = info.snapshot ? ` ${String(info.snapshot).slice(0, 12)}` : "";
  const cur = info.current ? `, current is ${String(info.current).slice(0, 12)}` : "";
  banner.replaceChildren(
    el("strong", { text: "⚠ Stale: " }),
    `epoch ${info.epoch ?? "?"} verified snapshot${snap}${cur} — changed since: `,
    el("span", { class: "files", text: files }),
    ". Its result is not the code as it is now: verify again (v).");
}

const FINISHED = new Set(["green", "red", "skipped", "error", "cancelled", "died"]);

// A running rung's elapsed time counts from its `environment.task.started` event (the
// status has no duration for it until it ends).
function rungTime(r) {
  if (r.state === "running") {
    const started = state.rungStarted.get(r.task);
    return started ? `${fmtDuration(Math.max(0, Date.now() - started) / 1000)} so far` : "running";
  }
  return fmtDuration(r.duration_s);
}

function currentRung(ep) {
  const running = (ep.rungs || []).find((r) => r.state === "running");
  return running ? running.rung : null;
}

function renderVerify() {
  renderStale();
  const box = $("epoch");
  const badge = $("verify-badge");
  const v = state.verify;
  if (!state.verifyAvailable || (!v && state.verifyProblem)) {
    badge.textContent = state.verifyAvailable ? "verify: unavailable" : "verify: not served";
    badge.dataset.state = "none";
    box.replaceChildren(el("p", { class: "empty", text: state.verifyAvailable
      ? `Verify status: ${state.verifyProblem}`
      : `Verify is not available here: ${state.verifyProblem || "no verify API"}. Open a project (the host's --project) on a host with the verify tools.` }));
    return;
  }
  if (!v) {
    box.replaceChildren(el("p", { class: "empty", text: "loading…" }));
    return;
  }
  const ep = v.epoch;
  const shown = staleInfo() ? "stale" : ep ? ep.state : "none";
  const now = ep && (ep.state === "running" || ep.state === "queued") ? currentRung(ep) : null;
  badge.textContent = `verify: ${STATE_GLYPH[shown] || ""} ${shown.replace(/_/g, " ")}${ep ? ` (epoch ${ep.epoch})` : ""}${now ? ` · ${now}` : ""}`;
  badge.dataset.state = shown;
  if (!ep) {
    box.replaceChildren(el("p", { class: "empty", text: `${v.summary || "No verify yet."} Press v to verify.` }));
    return;
  }
  const rungList = ep.rungs || [];
  const done = rungList.filter((r) => FINISHED.has(r.state)).length;
  const progress = ep.state === "running" || ep.state === "queued"
    ? el("p", { class: "progress", role: "status", text: rungList.length
      ? `${done} of ${rungList.length} rungs done${now ? ` · ${now} running` : ""}`
      : "queued: gathering requests, then it climbs" })
    : null;
  const verified = ep.stale || shown === "stale" ? ` (verified: ${ep.verified_state || ep.state})` : "";
  const summary = el("dl", { class: "epoch-meta" },
    el("dt", { text: "state" }), el("dd", { class: `s-${shown}`, text: `${STATE_GLYPH[shown] || ""} ${shown.replace(/_/g, " ")}${verified}` }),
    el("dt", { text: "snapshot" }), el("dd", { class: "mono", text: `${ep.snapshot || "–"}${ep.head ? ` on HEAD ${ep.head.slice(0, 10)}` : ""}` }),
    el("dt", { text: "policy" }), el("dd", { text: ep.policy || "–" }),
    el("dt", { text: "summary" }), el("dd", { text: v.summary || "" }),
    el("dt", { text: "change" }), el("dd", { text: ep.touched_count ? `${ep.touched_count} file(s): ${ep.touched.join(", ")}${ep.touched_count > ep.touched.length ? ", …" : ""}` : "none" }),
    ep.selection ? el("dt", { text: "tests" }) : null, ep.selection ? el("dd", { text: ep.selection }) : null,
    ep.reason ? el("dt", { text: "reason" }) : null, ep.reason ? el("dd", { text: ep.reason }) : null,
    ep.superseded_by ? el("dt", { text: "superseded" }) : null, ep.superseded_by ? el("dd", { text: `by ${ep.superseded_by}` }) : null,
    ep.notes && ep.notes.length ? el("dt", { text: "notes" }) : null, ep.notes && ep.notes.length ? el("dd", { text: ep.notes.join("; ") }) : null,
    el("dt", { text: "duration" }), el("dd", { text: ep.duration_s === null || ep.duration_s === undefined ? (progress ? "running" : "–") : fmtDuration(ep.duration_s) }));
  const rungs = el("ol", { class: "rungs", "aria-label": "Rungs" });
  for (const r of rungList) rungs.append(renderRung(r));
  box.replaceChildren(...[progress, summary, rungs].filter(Boolean));
}

// Counting up a running rung's time touches one text node a second, not the whole view.
function tickRunning() {
  for (const node of document.querySelectorAll("#epoch li.rung[data-state='running'] .rung-time")) {
    const item = node.closest("li.rung");
    node.textContent = rungTime({ state: "running", task: item.dataset.task });
  }
}

function renderRung(r) {
  const item = el("li", { class: "rung", "data-state": r.state, "data-rung": r.rung, "data-task": r.task });
  const count = r.state === "waiting" || r.state === "running" || r.state === "skipped"
    ? ""
    : `${r.new_findings} new · ${r.preexisting_findings} pre-existing`;
  item.append(el("div", { class: "rung-head" },
    el("span", { class: `rung-state s-${r.state}`, text: `${STATE_GLYPH[r.state] || "·"} ${r.state}` }),
    el("strong", { class: "rung-name", text: r.rung }),
    el("span", { class: "rung-tool", text: r.tool || "" }),
    el("span", { class: "rung-time", text: rungTime(r) }),
    el("span", { class: "rung-count", text: count })));
  if (r.reason) item.append(el("p", { class: "rung-reason", text: r.reason }));
  if (r.signal || (r.exit_code !== null && r.exit_code !== undefined && r.state !== "green"))
    item.append(el("p", { class: "rung-exit", text: r.signal ? `died by ${r.signal}` : `exit code ${r.exit_code}` }));
  const fresh = (r.diagnostics || []).filter((d) => !d.preexisting);
  const old = (r.diagnostics || []).filter((d) => d.preexisting);
  if (fresh.length) {
    const ul = el("ul", { class: "diags new", "aria-label": `new findings of ${r.rung}` });
    for (const d of fresh) ul.append(diagLine(d));
    if (r.new_findings > fresh.length) ul.append(el("li", { class: "diag more", text: `… ${r.new_findings - fresh.length} more new finding(s): the full output is in the spool` }));
    item.append(ul);
  }
  if (old.length || r.preexisting_findings) {
    // Folded, and it stays as the person left it when the view redraws.
    const key = `${r.task}:pre`;
    const det = el("details", { class: "preexisting", open: state.unfolded.has(key) },
      el("summary", { text: `${r.preexisting_findings || old.length} pre-existing finding(s) (also on HEAD, not red)` }));
    det.addEventListener("toggle", () => { if (det.open) state.unfolded.add(key); else state.unfolded.delete(key); });
    const ul = el("ul", { class: "diags old" });
    for (const d of old) ul.append(diagLine(d));
    const more = (r.preexisting_findings || 0) - old.length;
    if (more > 0) ul.append(el("li", { class: "diag more", text: `… ${more} more` }));
    det.append(ul);
    item.append(det);
  }
  if (r.notes && r.notes.length) item.append(el("p", { class: "rung-notes", text: r.notes.join("; ") }));
  if (r.output_tail) item.append(el("pre", { class: "tail", tabindex: "0", role: "log", "aria-live": "off", "aria-label": `output of ${r.rung}`, text: r.output_tail }));
  if (r.command_line) item.append(el("p", { class: "rung-cmd mono", text: `$ ${r.command_line}` }));
  if (r.spool && r.state !== "green") item.append(el("p", { class: "rung-spool mono", text: `full output: ${r.spool}` }));
  return item;
}

function diagLine(d) {
  const where = d.file ? `${d.file}${d.line ? `:${d.line}` : ""}` : "";
  return el("li", { class: d.preexisting ? "diag old" : "diag new" },
    el("span", { class: "mono", text: where }), " ",
    el("code", { text: d.code || d.source || "" }), " ",
    d.message,
    d.text ? el("pre", { class: "src", text: d.text }) : null);
}

// ---- timeline -------------------------------------------------------------------------------

function barResult(kind, data) {
  if (kind.endsWith(".started")) return "run";
  if (kind === "shell.run.exited") return data.exit_code === 0 ? "ok" : "bad";
  if (kind === "shell.run.lost") return "lost";
  if (kind.startsWith("shell.run.")) return "stop";
  if (kind === "environment.task.completed") return data.state === "red" ? "bad" : "ok";
  if (kind === "environment.task.failed" || kind === "environment.task.died") return "bad";
  return "stop";
}

function trackBars(e) {
  const d = e.data || {};
  let key = null;
  let lane = null;
  let label = null;
  if (e.kind.startsWith("shell.run.") && e.tab) {
    key = `run:${e.tab}:${d.index}`;
    lane = `tab ${e.tab}`;
    label = `#${d.index} ${d.command || ""}`;
  } else if (e.kind.startsWith("environment.task.") && e.task && d.rung) {
    key = `task:${e.task}`;
    lane = d.rung;
    label = d.rung;
  } else if (e.kind.startsWith("environment.task.") && e.task && d.chain) {
    key = `chain:${e.task}`;
    lane = "verify";
    label = `epoch ${d.epoch}`;
  }
  if (!key) return false;
  const ms = e.ts * 1000;
  const result = barResult(e.kind, d);
  let bar = state.bars.get(key);
  if (e.kind.endsWith(".started")) {
    bar = { key, lane, label, start: ms, end: null, result };
    state.bars.set(key, bar);
  } else if (bar && !e.kind.endsWith(".progress") && !e.kind.endsWith(".queued")) {
    bar.end = ms;
    bar.result = result;
    const detail = e.kind.startsWith("shell.") ? runText({ state: d.state, exit_code: d.exit_code }) : d.state;
    bar.label = `${label} · ${detail}`;
  } else {
    return false;
  }
  return true;
}

function renderTimeline() {
  state.pendingTimeline = false;
  renderAccounting();
  const windowS = Number($("timeline-window").value);
  const now = Date.now();
  const from = now - windowS * 1000;
  const bars = [...state.bars.values()].filter((b) => (b.end ?? now) >= from);
  const lanes = [...new Set(bars.map((b) => b.lane))].sort();
  const box = $("timeline");
  const list = $("timeline-list");
  if (!bars.length) {
    box.replaceChildren(el("p", { class: "empty", text: "Nothing ran in this window." }));
    list.replaceChildren();
    return;
  }
  const width = Math.max(box.clientWidth || 600, 320);
  const labelW = width < 500 ? 70 : 130;
  const rowH = 26;
  const height = lanes.length * rowH + 30;
  const x = (ms) => labelW + ((ms - from) / (now - from)) * (width - labelW - 8);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", "100%");
  svg.setAttribute("height", String(height));
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `Timeline of the last ${windowS / 60} minutes: ${bars.length} bars in ${lanes.length} lanes; the list below has the same`);
  const add = (tag, attrs, text) => {
    const n = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = text;
    svg.append(n);
    return n;
  };
  for (let i = 0; i <= 4; i++) {
    const t = from + ((now - from) * i) / 4;
    const tx = x(t);
    add("line", { x1: tx, x2: tx, y1: 0, y2: height - 18, class: "grid" });
    add("text", { x: tx, y: height - 4, class: "axis", "text-anchor": i === 0 ? "start" : i === 4 ? "end" : "middle" }, fmtTime(t / 1000));
  }
  lanes.forEach((lane, i) => add("text", { x: 4, y: i * rowH + 17, class: "lane" }, lane.length > 14 ? `${lane.slice(0, 13)}…` : lane));
  const rows = [];
  for (const b of bars.sort((a, c) => a.start - c.start)) {
    const i = lanes.indexOf(b.lane);
    const x0 = Math.max(x(b.start), labelW);
    const x1 = Math.max(x(b.end ?? now), x0 + 3);
    const rect = add("rect", { x: x0, y: i * rowH + 4, width: x1 - x0, height: rowH - 8, rx: 2, class: `bar r-${b.result}` });
    const title = document.createElementNS(ns, "title");
    title.textContent = `${b.lane}: ${b.label} (${fmtTime(b.start / 1000)}, ${fmtDuration(((b.end ?? now) - b.start) / 1000)})`;
    rect.append(title);
    if (x1 - x0 > 60) add("text", { x: x0 + 4, y: i * rowH + 17, class: "barlabel" }, `${RESULT_GLYPH[b.result] || ""} ${b.label}`.slice(0, Math.floor((x1 - x0) / 7)));
    else add("text", { x: x0 + 1, y: i * rowH + 17, class: "barglyph" }, RESULT_GLYPH[b.result] || "");
    rows.push(el("li", { class: `r-${b.result}` },
      `${RESULT_GLYPH[b.result] || ""} ${fmtTime(b.start / 1000)} ${b.lane} — ${b.label} (${b.end ? fmtDuration((b.end - b.start) / 1000) : "running"})`));
  }
  box.replaceChildren(svg);
  list.replaceChildren(...rows.reverse());
}

function renderAccounting() {
  const box = $("accounting");
  const time = state.verify && state.verify.time;
  const acc = time && (time.session || time.workspace);
  if (!acc || !acc.wall_s) {
    box.replaceChildren(el("p", { class: "empty", text: "Time accounting appears once the verify runner has counted some time." }));
    return;
  }
  const wall = acc.wall_s;
  const parts = [
    ["reasoning", acc.reasoning_s], ["blocked", acc.blocked_s], ["idle", acc.idle_s],
  ];
  const bar = el("div", { class: "stack", role: "img", "aria-label": parts.map(([n, s]) => `${n} ${fmtDuration(s)}`).join(", ") + ` of ${fmtDuration(wall)} wall` });
  for (const [name, s] of parts) {
    const pct = Math.max(0, (s / wall) * 100);
    if (pct <= 0) continue;
    bar.append(el("span", { class: `seg ${name}`, style: `width:${pct}%`, text: pct > 12 ? `${name} ${fmtDuration(s)}` : "" }));
  }
  const env = el("div", { class: "stack envbar", role: "img", "aria-label": `environment ran ${fmtDuration(acc.environment_s)} of ${fmtDuration(wall)}` },
    el("span", { class: "seg environment", style: `width:${Math.min(100, (acc.environment_s / wall) * 100)}%`, text: "" }));
  box.replaceChildren(
    el("h3", { text: `Time accounting (${time.session ? "this session" : "workspace"}, ${fmtDuration(wall)} wall)` }),
    bar,
    env,
    el("p", { class: "acc-legend", text: `reasoning ${fmtDuration(acc.reasoning_s)} · blocked ${fmtDuration(acc.blocked_s)} · idle ${fmtDuration(acc.idle_s)} · environment ${fmtDuration(acc.environment_s)} (runs alongside the others)` }));
}

// ---- events ----------------------------------------------------------------------------------

function eventSummary(e) {
  const d = e.data || {};
  if (e.kind.startsWith("shell.run.")) return `#${d.index} ${d.command || ""}${d.exit_code !== undefined && d.exit_code !== null ? ` → ${d.exit_code}` : ""}${d.state ? ` (${d.state})` : ""}`;
  const json = JSON.stringify(d);
  return json.length > 200 ? `${json.slice(0, 199)}…` : json;
}

function eventMatches(e) {
  const kind = $("event-kind").value;
  const text = $("event-text").value.trim().toLowerCase();
  if (kind && !e.kind.startsWith(kind)) return false;
  if (text && !`${e.kind} ${e.tab || ""} ${e.task || ""} ${JSON.stringify(e.data || {})}`.toLowerCase().includes(text)) return false;
  return true;
}

function eventRow(e) {
  return el("tr", { "data-event-id": String(e.id), "data-kind": e.kind },
    el("td", { class: "num", text: String(e.id) }),
    el("td", { text: fmtTime(e.ts) }),
    el("td", { class: "kind", text: e.kind }),
    el("td", { text: e.tab || e.task || "" }),
    el("td", { class: "data", text: eventSummary(e) }));
}

function renderEvents(all) {
  const body = $("event-rows");
  if (all) {
    body.replaceChildren();
    state.rendered = 0;
  }
  const fresh = [];
  for (let i = state.events.length - 1; i >= 0 && state.events[i].id > state.rendered; i--) {
    if (eventMatches(state.events[i])) fresh.push(state.events[i]);
    if (fresh.length >= EVENTS_SHOWN) break;
  }
  if (state.events.length) state.rendered = state.events[state.events.length - 1].id;
  if (fresh.length) {
    const frag = document.createDocumentFragment();
    for (const e of fresh) frag.append(eventRow(e));
    body.prepend(frag);
    while (body.children.length > EVENTS_SHOWN) body.lastElementChild.remove();
  }
  $("event-count").textContent = `${body.children.length} shown of ${state.events.length} kept (last id ${state.lastId})`;
}

// ---- the stream -------------------------------------------------------------------------------

const SCENE_KINDS = /^shell\./;
const VERIFY_KINDS = /^(verify\.|environment\.)/;

function onEvent(e) {
  if (e.id) {
    if (e.id <= state.lastId) return;
    state.lastId = e.id;
  }
  const d = e.data || {};
  state.events.push(e);
  if (state.events.length > EVENTS_KEPT) state.events.splice(0, state.events.length - EVENTS_KEPT);
  const views = ["events"];
  if (trackBars(e)) views.push("timeline");
  if (SCENE_KINDS.test(e.kind)) {
    applyShellEvent(e);
    views.push("tabs");
    sceneSoon();
  }
  if (e.kind === "verify.epoch.stale") {
    state.staleLive = { changed: d.all_changed || d.changed || [], epoch: d.epoch, snapshot: state.verify && state.verify.epoch && state.verify.epoch.snapshot };
    views.push("verify");
  }
  if (e.kind === "environment.task.started" && e.task && d.rung) {
    state.rungStarted.set(e.task, e.ts * 1000);
    if (state.rungStarted.size > RUNGS_KEPT) state.rungStarted.delete(state.rungStarted.keys().next().value);
  }
  if (VERIFY_KINDS.test(e.kind) || e.kind === "project.opened") {
    if (e.kind === "project.opened") state.verifyAvailable = true;
    verifySoon();
  }
  mark(...views);
}

// The event itself updates the card at once; the scene refresh after it brings the rest.
function applyShellEvent(e) {
  const d = e.data || {};
  if (!e.tab || !live) return;
  if (e.kind === "shell.tab.closed") {
    state.tabs.delete(e.tab);
    return;
  }
  let tab = state.tabs.get(e.tab);
  if (!tab) {
    tab = { name: e.tab, shell: d.shell || "", cwd: d.cwd || "", state: "idle", pid: null, last_run: null, preview: "", tail: "", cursor: 0, index: null };
    state.tabs.set(e.tab, tab);
  }
  if (e.kind === "shell.run.started") {
    tab.state = "running";
    tab.pid = d.pid;
    tab.cwd = d.cwd || tab.cwd;
    tab.last_run = { index: d.index, command: d.command, state: "running", exit_code: null, duration_s: 0 };
    tab.index = d.index;
    tab.tail = "";
    tab.cursor = 0;
  } else if (/^shell\.run\.(exited|killed|lost)$/.test(e.kind) && tab.last_run && tab.last_run.index === d.index) {
    tab.state = "idle";
    tab.pid = null;
    tab.last_run = { ...tab.last_run, state: d.state, exit_code: d.exit_code, duration_s: d.duration_s };
  }
}

let live = false; // replaying the backlog: the scene is fetched once it is through
let sceneTimer = 0;
function sceneSoon() {
  if (!live || sceneTimer) return;
  sceneTimer = setTimeout(() => { sceneTimer = 0; refreshScene(); }, 150);
}
let verifyTimer = 0;
function verifySoon() {
  if (!live || verifyTimer) return;
  verifyTimer = setTimeout(() => { verifyTimer = 0; refreshVerify(); }, 200);
}

function connect() {
  const source = new EventSource("/events?since=0");
  const conn = $("conn");
  source.onopen = () => {
    conn.textContent = "live";
    conn.dataset.state = "live";
  };
  source.onerror = () => {
    conn.textContent = source.readyState === EventSource.CLOSED ? "disconnected (reload to retry)" : "reconnecting…";
    conn.dataset.state = "down";
  };
  const handle = (msg) => {
    try {
      onEvent(JSON.parse(msg.data));
    } catch (_) { /* a frame that is not an event (a comment) */ }
  };
  source.onmessage = handle;
  // Named events (`event: KIND`) do not reach onmessage; listen to every kind we know and
  // to the rest through a catch-all added per kind seen in the journal.
  const kinds = [
    "shell.tab.opened", "shell.tab.closed", "shell.run.started", "shell.run.exited", "shell.run.killed", "shell.run.lost",
    "environment.task.queued", "environment.task.started", "environment.task.progress", "environment.task.completed",
    "environment.task.failed", "environment.task.cancelled", "environment.task.died",
    "verify.epoch.started", "verify.epoch.stale", "verify.epoch.finished", "verify.watch.failed",
    "project.opened", "host.started", "host.stopped", "journal.gap", "file.written", "file.edited",
  ];
  for (const k of kinds) source.addEventListener(k, handle);
  window.habitatSource = source;
}

async function loadWhere() {
  try {
    const r = await fetch("/api/status", { credentials: "same-origin" });
    const s = await r.json();
    $("where").textContent = `${s.root || "?"} · host pid ${s.pid} · v${s.version}`;
  } catch (_) {
    $("where").textContent = "host status unavailable";
  }
}

// ---- views and keys ----------------------------------------------------------------------------

function show(view) {
  state.view = view;
  for (const b of document.querySelectorAll('[role="tab"]')) {
    const on = b.dataset.view === view;
    b.setAttribute("aria-selected", String(on));
    b.tabIndex = on ? 0 : -1;
    $(b.getAttribute("aria-controls")).hidden = !on;
  }
  if (view === "timeline") mark("timeline");
}

function focusTab(n) {
  show("tabs");
  const card = $("tab-list").children[n - 1];
  if (card) card.focus();
}

function focusedTab() {
  const card = document.activeElement && document.activeElement.closest && document.activeElement.closest("li.tab");
  return card ? card.dataset.tab : state.focused;
}

function onKey(ev) {
  const t = ev.target;
  const typing = t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA");
  if (ev.key === "Escape" && typing) { t.blur(); return; }
  if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const help = $("help");
  if (help.open && ev.key !== "?") return;
  const keys = {
    "?": () => (help.open ? help.close() : help.showModal()),
    v: verify,
    c: cancelVerify,
    k: () => { const tab = focusedTab(); if (tab) act("shell_kill", tab); else say("tabs-message", "focus a tab first (1–8)", true); },
    r: () => { const tab = focusedTab(); if (tab) act("shell_rerun", tab); else say("tabs-message", "focus a tab first (1–8)", true); },
    "/": () => { show("tabs"); $("run-command").focus(); },
    T: () => show("tabs"), V: () => show("verify"), L: () => show("timeline"), E: () => show("events"),
  };
  if (/^[1-8]$/.test(ev.key)) {
    ev.preventDefault();
    focusTab(Number(ev.key));
    return;
  }
  const fn = keys[ev.key];
  if (fn) {
    ev.preventDefault();
    fn();
  }
}

function onTablistKey(ev) {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  const i = tabs.indexOf(document.activeElement);
  if (i < 0) return;
  let j = null;
  if (ev.key === "ArrowRight") j = (i + 1) % tabs.length;
  if (ev.key === "ArrowLeft") j = (i - 1 + tabs.length) % tabs.length;
  if (ev.key === "Home") j = 0;
  if (ev.key === "End") j = tabs.length - 1;
  if (j === null) return;
  ev.preventDefault();
  ev.stopPropagation();
  show(tabs[j].dataset.view);
  tabs[j].focus();
}

async function runFromForm(ev) {
  ev.preventDefault();
  const tab = $("run-tab").value.trim() || "main";
  const command = $("run-command").value;
  if (!command.trim()) return;
  say("tabs-message", `run in ${tab}…`);
  try {
    const r = await api("shell_run", { command, tab, background: true });
    say("tabs-message", `started #${r.index} in ${r.tab} (pid ${r.pid})`);
    $("run-command").value = "";
  } catch (err) {
    say("tabs-message", `run: ${problem(err)}`, true);
  }
  refreshScene();
}

function init() {
  // The one-time login (or a token) must not stay in the address bar, history or Referer:
  // the host has already exchanged it for an HttpOnly cookie.
  if (location.search) history.replaceState(null, "", location.pathname + location.hash);
  for (const b of document.querySelectorAll('[role="tab"]')) b.addEventListener("click", () => show(b.dataset.view));
  document.querySelector('[role="tablist"]').addEventListener("keydown", onTablistKey);
  document.addEventListener("keydown", onKey);
  $("help-open").addEventListener("click", () => $("help").showModal());
  $("run-form").addEventListener("submit", runFromForm);
  $("verify-form").addEventListener("submit", (ev) => { ev.preventDefault(); verify(); });
  $("verify-cancel").addEventListener("click", cancelVerify);
  $("event-kind").addEventListener("change", () => mark("events", "events-all"));
  $("event-text").addEventListener("input", () => mark("events", "events-all"));
  $("timeline-window").addEventListener("change", () => mark("timeline"));
  window.addEventListener("resize", () => mark("timeline"));
  const policy = new URLSearchParams(location.hash.slice(1)).get("policy");
  if (POLICIES.includes(policy)) $("verify-policy").value = policy;
  loadWhere();
  connect();
  // The scene and verify status come from the API; the stream then keeps them current.
  live = true;
  refreshScene();
  refreshVerify();
  setInterval(pollTails, POLL_MS);
  // Running bars grow and the time axis moves even when nothing is published.
  setInterval(() => { if (state.view === "timeline") mark("timeline"); }, 5000);
  setInterval(() => { if (state.view === "verify" && !document.hidden) tickRunning(); }, 1000);
  mark("tabs", "verify", "events");
}

document.addEventListener("DOMContentLoaded", init);
