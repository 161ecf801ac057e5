// The Timeline view: runs and ladder tasks of the last hour as labelled bars on a time axis
// (a glyph and a label besides the colour), the same as a list, and the runner's time
// accounting as a stacked bar.

import { $, el, fmtDuration, fmtTime, onRender, state } from "./core.js";
import { RESULT_GLYPH, runText } from "./tabs.js";

const TIMELINE_KEPT = 3600 * 1000; // ms: bars that ended longer ago are dropped

function barResult(kind, data) {
  if (kind.endsWith(".started")) return "run";
  if (kind === "shell.run.exited") return data.exit_code === 0 ? "ok" : "bad";
  if (kind === "shell.run.lost") return "lost";
  if (kind.startsWith("shell.run.")) return "stop";
  // `completed` also ends a skipped rung and an incomplete or nothing-to-verify ladder:
  // only green is a tick (green means something was checked).
  if (kind === "environment.task.completed") return data.state === "green" ? "ok" : "stop";
  if (kind === "environment.task.failed" || kind === "environment.task.died") return "bad";
  return "stop";
}

function pruneBars(now) {
  for (const [key, bar] of state.bars) if (bar.end !== null && now - bar.end > TIMELINE_KEPT) state.bars.delete(key);
}

export function trackBars(e) {
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
    if (state.bars.size % 100 === 0) pruneBars(Date.now());
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

// Through CSSOM: the page's CSP (`style-src 'self'`) drops a `style` attribute, never this.
function widthOf(node, pct) {
  node.style.width = `${pct}%`;
  return node;
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
    bar.append(widthOf(el("span", { class: `seg ${name}`, text: pct > 12 ? `${name} ${fmtDuration(s)}` : "" }), pct));
  }
  const env = el("div", { class: "stack envbar", role: "img", "aria-label": `environment ran ${fmtDuration(acc.environment_s)} of ${fmtDuration(wall)}` },
    widthOf(el("span", { class: "seg environment", text: "" }), Math.min(100, (acc.environment_s / wall) * 100)));
  box.replaceChildren(
    el("h3", { text: `Time accounting (${time.session ? "this session" : "workspace"}, ${fmtDuration(wall)} wall)` }),
    bar,
    env,
    el("p", { class: "acc-legend", text: `reasoning ${fmtDuration(acc.reasoning_s)} · blocked ${fmtDuration(acc.blocked_s)} · idle ${fmtDuration(acc.idle_s)} · environment ${fmtDuration(acc.environment_s)} (runs alongside the others)` }));
}

// Drawn only while shown (an SVG of every bar is not free); showing the view marks it.
onRender("timeline", () => { if (state.view === "timeline") renderTimeline(); });
