// The agent-habitat dashboard: one page, live through /events (SSE), acting through the
// host's JSON API (POST /api/<tool>). No build step, nothing fetched from elsewhere: these
// ES modules ship inside the package. This one is the stream, the views and the keys;
//   core.js      state, the API, the rendering loop, DOM and formatting helpers
//   events.js    the journal table        tabs.js      the shell tabs and their tails
//   verify.js    the verify epoch         timeline.js  bars on a time axis, time accounting
// The events table draws first in each frame: it is what a person watches for news.

import { $, api, mark, problem, say, state } from "./core.js";
import { keepEvent, refilter } from "./events.js";
import { act, applyShellEvent, followTails, refreshScene, sceneSoon } from "./tabs.js";
import { cancelVerify, onVerifyEvent, refreshVerify, tickRunning, verify } from "./verify.js";
import { trackBars } from "./timeline.js";

// ---- the stream -------------------------------------------------------------------------------

const SCENE_KINDS = /^shell\./;

function onEvent(e) {
  if (e.id) {
    if (e.id <= state.lastId) return;
    state.lastId = e.id;
  }
  keepEvent(e);
  const views = ["events"];
  if (trackBars(e)) views.push("timeline");
  if (SCENE_KINDS.test(e.kind)) {
    applyShellEvent(e);
    views.push("tabs");
    sceneSoon();
  }
  if (onVerifyEvent(e)) views.push("verify");
  mark(...views);
}

// The kinds the host publishes and its verify policies: from GET /api/meta, never copied here.
async function loadMeta() {
  try {
    const r = await fetch("/api/meta", { credentials: "same-origin" });
    if (r.ok) return await r.json();
  } catch (_) { /* the stream and the API say what is wrong */ }
  return { event_kinds: [], policies: {} };
}

function fillPolicies(policies) {
  const select = $("verify-policy");
  const asked = new URLSearchParams(location.hash.slice(1)).get("policy");
  let before = [];
  for (const [name, rungs] of Object.entries(policies)) {
    const more = before.length && before.every((r) => rungs.includes(r));
    const added = more ? rungs.filter((r) => !before.includes(r)) : rungs;
    const text = `${name} — ${more ? "+ " : ""}${added.join(", ")}`;
    select.append(new Option(text, name, false, name === (asked in policies ? asked : "standard")));
    before = rungs;
  }
}

function fillKindFilter(kinds) {
  const select = $("event-kind");
  for (const group of new Set(kinds.map((k) => k.split(".")[0]))) {
    select.append(new Option(`${group}.*`, `${group}.`));
  }
}

function connect(kinds) {
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
  // Named events (`event: KIND`) do not reach onmessage: listen to every kind the host
  // publishes (its /api/meta).
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

async function init() {
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
  $("event-kind").addEventListener("change", refilter);
  $("event-text").addEventListener("input", refilter);
  $("timeline-window").addEventListener("change", () => mark("timeline"));
  window.addEventListener("resize", () => mark("timeline"));
  loadWhere();
  const meta = await loadMeta();
  fillPolicies(meta.policies);
  fillKindFilter(meta.event_kinds);
  connect(meta.event_kinds);
  // The scene and verify status come from the API; the stream then keeps them current.
  state.live = true;
  refreshScene();
  refreshVerify();
  followTails();
  // Running bars grow and the time axis moves even when nothing is published.
  setInterval(() => { if (state.view === "timeline") mark("timeline"); }, 5000);
  setInterval(() => { if (state.view === "verify" && !document.hidden) tickRunning(); }, 1000);
  mark("tabs", "verify", "events");
}

document.addEventListener("DOMContentLoaded", init);
