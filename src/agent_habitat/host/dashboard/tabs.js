// The Tabs view: every shell tab as a card with its state, cwd, last command, result and a
// live tail of a running command; kill, rerun and close act through the JSON API.
//
// Eight tabs printing at full speed must not starve the page (the stream's events wait on
// the same main thread, and the browser's processes share one CPU share of the machine):
// the tails of the running cards on screen come in ONE request (`/api/dashboard/tails`, cut
// on the host to what a card keeps), the next only a pause after the last answer, so a
// loaded machine slows the tails, never the events; a card's tail is written only when its
// text changed, all text before any scroll position is set (one layout per redraw).

import { $, api, el, fmtDuration, mark, onRender, problem, say, setText, state } from "./core.js";

const TAIL_CHARS = 3000; // live tail kept per tab: the card shows about ten lines of it
const TAIL_LINES = 40;
// Between a tails answer and the next request: longer with more tabs printing, as each
// answer redraws all their tails (most of the window) and the eye cannot follow eight.
const TAILS_PAUSE_MS = 500;
const TAILS_PAUSE_PER_TAB_MS = 125;
// A shell event updates its card at once; the scene (previews, cwd) follows at most this
// often, so a burst of runs costs one scene request, not one per event.
const SCENE_DELAY_MS = 1000;

export const RESULT_GLYPH = { ok: "✓", bad: "✗", stop: "■", run: "▶", lost: "?" };

export function runResult(run) {
  if (!run) return null;
  if (run.state === "running") return "run";
  if (run.state === "exited") return run.exit_code === 0 ? "ok" : "bad";
  if (run.state === "lost") return "lost";
  return "stop";
}

export function runText(run) {
  if (!run) return "no run yet";
  if (run.state === "running") return "running";
  if (run.state === "exited") return `exit ${run.exit_code}`;
  return run.state.replace("_", " ");
}

function tabOrder(a, b) {
  return a === "main" ? -1 : b === "main" ? 1 : a.localeCompare(b);
}

// Cards on screen; a card scrolled out of view is neither polled nor (content-visibility)
// laid out.
const onScreen = new Set();
const screenWatch = new IntersectionObserver((entries) => {
  let shown = false;
  for (const entry of entries) {
    const name = entry.target.dataset.tab;
    if (entry.isIntersecting && !onScreen.has(name)) shown = true;
    if (entry.isIntersecting) onScreen.add(name);
    else onScreen.delete(name);
  }
  // A card that comes into view (the Tabs view shown again, a scroll) gets its tail now.
  if (shown) tailsSoon();
});

function renderTabs() {
  const list = $("tab-list");
  const names = [...state.tabs.keys()].sort(tabOrder);
  // Setting `hidden` again, even to what it is, invalidates style: only when it changes.
  const empty = $("tabs-empty");
  if (empty.hidden !== names.length > 0) empty.hidden = names.length > 0;
  const seen = new Set();
  const follow = [];
  names.forEach((name, i) => {
    const tab = state.tabs.get(name);
    seen.add(name);
    let card = list.querySelector(`li[data-tab="${CSS.escape(name)}"]`);
    if (!card) {
      card = buildTabCard(name);
      list.append(card);
    }
    if (list.children[i] !== card) list.insertBefore(card, list.children[i]);
    if (fillTabCard(card, tab, i)) follow.push(card.tail);
  });
  for (const card of [...list.children]) {
    if (seen.has(card.dataset.tab)) continue;
    screenWatch.unobserve(card);
    onScreen.delete(card.dataset.tab);
    card.remove();
  }
  // Scrolling needs layout: after every write, so the frame lays out once.
  for (const tail of follow) tail.scrollTop = tail.scrollHeight;
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
  // Whether the tail follows new output: until the person scrolls up, and again at the end.
  card.following = true;
  tail.addEventListener("scroll", () => {
    card.following = tail.scrollTop + tail.clientHeight >= tail.scrollHeight - 4;
  }, { passive: true });
  const actions = el("div", { class: "tab-actions", role: "group", "aria-label": `actions for tab ${name}` },
    el("button", { type: "button", class: "kill", text: "Kill", "aria-label": `Kill the command in tab ${name}`, onclick: () => act("shell_kill", name) }),
    el("button", { type: "button", class: "rerun", text: "Rerun", "aria-label": `Rerun the last command in tab ${name}`, onclick: () => act("shell_rerun", name) }),
    el("button", { type: "button", class: "close", text: "Close", "aria-label": `Close tab ${name}`, onclick: () => act("shell_close", name) }));
  card.append(head, meta, tail, actions);
  card.tail = tail;
  screenWatch.observe(card);
  card.parts = {
    name: head.querySelector(".tab-name"),
    state: head.querySelector(".tab-state"),
    cwd: meta.querySelector(".tab-cwd"),
    cmd: meta.querySelector(".tab-cmd"),
    result: meta.querySelector(".tab-result"),
    kill: actions.querySelector(".kill"),
    rerun: actions.querySelector(".rerun"),
  };
  return card;
}

// Returns true when the tail's text changed and it should show its end.
function fillTabCard(card, tab, i) {
  const run = tab.last_run;
  const result = tab.state === "running" ? "run" : runResult(run);
  const p = card.parts;
  if (card.dataset.state !== tab.state) card.dataset.state = tab.state;
  if (card.dataset.result !== (result || "none")) card.dataset.result = result || "none";
  setText(p.name, `${i + 1} · ${tab.name}`);
  setText(p.state, `${RESULT_GLYPH[result] || "·"} ${tab.state}${tab.pid && tab.state === "running" ? ` (pid ${tab.pid})` : ""}`);
  const stateClass = `tab-state r-${result || "none"}`;
  if (p.state.className !== stateClass) p.state.className = stateClass;
  setText(p.cwd, tab.cwd || "–");
  setText(p.cmd, run ? `#${run.index} ${run.command}` : "–");
  setText(p.result, run ? `${runText(run)}${run.state !== "running" ? ` · ${fmtDuration(run.duration_s)}` : ""}` : "–");
  p.kill.disabled = tab.state !== "running";
  p.rerun.disabled = !run || tab.state === "running";
  // Compared with what this card last wrote: reading a pre's textContent builds a string.
  const text = tab.tail || tab.preview || "";
  if (card.shown === text) return false;
  card.shown = text;
  card.tail.textContent = text;
  return card.following;
}

function boundTail(text) {
  if (text.length > TAIL_CHARS) text = text.slice(text.length - TAIL_CHARS);
  const lines = text.split("\n");
  if (lines.length > TAIL_LINES) text = lines.slice(lines.length - TAIL_LINES).join("\n");
  return text;
}

export async function act(tool, tab) {
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
export async function refreshScene() {
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

let sceneTimer = 0;
export function sceneSoon() {
  if (!state.live || sceneTimer) return;
  sceneTimer = setTimeout(() => { sceneTimer = 0; refreshScene(); }, SCENE_DELAY_MS);
}

// Tabs whose run ended since their tail was last asked: asked once more for the end of it.
const finishing = new Set();

// `last` with only `since` reads a head and a tail of the new bytes (bounded work on the
// host however fast the tab prints); when bytes were left out, the host drops the head.
// Returns how long to pause before the next.
async function pollTails() {
  if (state.view !== "tabs" || document.hidden) return TAILS_PAUSE_MS;
  const asked = {};
  for (const t of state.tabs.values()) {
    if (!onScreen.has(t.name)) continue;
    if (t.state === "running" || finishing.has(t.name)) asked[t.name] = t.cursor || 0;
    finishing.delete(t.name);
  }
  const count = Object.keys(asked).length;
  if (!count) return TAILS_PAUSE_MS;
  const r = await api("dashboard/tails", { tabs: asked, chars: TAIL_CHARS });
  let changed = false;
  for (const [name, t] of Object.entries(r.tails)) {
    const cur = state.tabs.get(name);
    if (!cur || cur.index !== t.index || t.cursor === cur.cursor) continue;
    const fresh = t.omitted_bytes > 0
      ? `… [${t.omitted_bytes} bytes skipped] …\n${t.output}`
      : t.output;
    cur.tail = boundTail(t.omitted_bytes > 0 ? fresh : (cur.tail || "") + fresh);
    cur.cursor = t.cursor;
    changed = true;
  }
  if (changed) mark("tabs");
  return Math.max(TAILS_PAUSE_MS, count * TAILS_PAUSE_PER_TAB_MS);
}

// One request at a time; the next a pause after the answer (or the failure) of the last.
let tailsTimer = 0;
let tailsBusy = false;
export function followTails() {
  tailsTimer = 0;
  tailsBusy = true;
  pollTails()
    .catch(() => TAILS_PAUSE_MS)
    .then((pause) => {
      tailsBusy = false;
      tailsTimer = setTimeout(followTails, pause || TAILS_PAUSE_MS);
    });
}

function tailsSoon() {
  if (tailsBusy || !tailsTimer) return;
  clearTimeout(tailsTimer);
  followTails();
}

// The event itself updates the card at once; the scene refresh after it brings the rest.
export function applyShellEvent(e) {
  const d = e.data || {};
  if (!e.tab || !state.live) return;
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
    // Its last output may have come after the last tails answer.
    if (tab.cursor) finishing.add(tab.name);
  }
}

onRender("tabs", renderTabs);
