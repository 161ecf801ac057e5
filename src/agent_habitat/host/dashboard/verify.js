// The Verify epoch view: the newest epoch as the runner's `verify_status` answers it, each
// rung with its state, duration (a running one counts up from its `environment.task.started`
// event) and diagnostics, new findings first and pre-existing ones folded; the stale banner
// names the files changed since its snapshot; verify (with a policy) and cancel.

import { $, ApiError, api, el, fmtDuration, mark, onRender, problem, say, state } from "./core.js";

const RUNGS_KEPT = 100; // start times of rung tasks kept for their elapsed time

// The runner's text names the agent's next step (a tool and its fields); a person on this
// page presses a key or picks a policy (as terminal_words.py does for the CLI).
const PAGE_WORDS = [
  ["run verify_run again", "verify again (v)"],
  ["never verified: run verify_run", "never verified."],
  ["(verify_run without rung for it)", "(verify again for it)"],
  ["(name files or a filter, or use the ci_parity policy for the full suite)", "(pick the ci_parity policy for the full suite)"],
  ["(name files or a filter, or climb to test.full)", "(pick the ci_parity policy for the full suite)"],
];
function forPerson(text) {
  return PAGE_WORDS.reduce((t, [agent, person]) => t.replaceAll(agent, person), text || "");
}
const STATUS_DELAY_MS = 200; // a verify or environment event asks for the status this often

let verifyBusy = false;
let verifyAgain = false;
export async function refreshVerify() {
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

export async function verify() {
  const policy = $("verify-policy").value;
  say("verify-message", `verify (${policy})…`);
  try {
    const r = await api("verify_run", { policy });
    state.asked = r.task;
    say("verify-message", forPerson(r.summary) || `${r.state}: epoch ${r.epoch} (${r.task})`);
    state.verifyAvailable = true;
  } catch (err) {
    say("verify-message", `verify: ${problem(err)}`, true);
  }
  refreshVerify();
}

export async function cancelVerify() {
  say("verify-message", "cancel…");
  state.asked = null; // the cancel's own answer is the news, not the end of that run
  try {
    const r = await api("verify_cancel", {});
    say("verify-message", forPerson(r.summary) || (r.cancelled ? "cancelled" : "nothing to cancel"));
  } catch (err) {
    say("verify-message", `cancel: ${problem(err)}`, true);
  }
  refreshVerify();
}

const STATE_GLYPH = {
  green: "✓", red: "✗", running: "▶", waiting: "…", queued: "…", skipped: "–", error: "!",
  cancelled: "■", died: "☠", stale: "⚠", incomplete: "?", nothing_to_verify: "∅", lost: "?",
};

export function staleInfo() {
  const v = state.verify;
  if (state.staleLive) return state.staleLive;
  if (v && v.stale) {
    const ep = v.epoch || {};
    const changed = v.changed || [];
    return { changed, count: ep.changed_count || changed.length, epoch: ep.epoch, snapshot: ep.snapshot, current: v.current_snapshot };
  }
  return null;
}

function renderStale() {
  const banner = $("stale");
  const info = staleInfo();
  banner.hidden = !info;
  if (!info) return;
  const more = info.count > info.changed.length ? ` and ${info.count - info.changed.length} more` : "";
  const files = info.changed.length ? `${info.changed.join(", ")}${more}` : "files of its set";
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
    box.replaceChildren(el("p", { class: "empty", text: `${forPerson(v.summary) || "No verify yet."} Press v to verify.` }));
    return;
  }
  if (state.asked === ep.task && ep.state !== "queued" && ep.state !== "running") {
    // The run the person asked for ended: the message says so instead of "queued".
    state.asked = null;
    say("verify-message", `epoch ${ep.epoch} ended ${(ep.verified_state || ep.state).replace(/_/g, " ")} in ${fmtDuration(ep.duration_s)}`);
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
    el("dt", { text: "summary" }), el("dd", { text: forPerson(v.summary) }),
    el("dt", { text: "change" }), el("dd", { text: ep.touched_count ? `${ep.touched_count} file(s): ${ep.touched.join(", ")}${ep.touched_count > ep.touched.length ? ", …" : ""}` : "none" }),
    ep.selection ? el("dt", { text: "tests" }) : null, ep.selection ? el("dd", { text: ep.selection }) : null,
    ep.reason ? el("dt", { text: "reason" }) : null, ep.reason ? el("dd", { text: forPerson(ep.reason) }) : null,
    ep.superseded_by ? el("dt", { text: "superseded" }) : null, ep.superseded_by ? el("dd", { text: `by ${ep.superseded_by}` }) : null,
    ep.notes && ep.notes.length ? el("dt", { text: "notes" }) : null, ep.notes && ep.notes.length ? el("dd", { text: ep.notes.join("; ") }) : null,
    el("dt", { text: "duration" }), el("dd", { text: ep.duration_s === null || ep.duration_s === undefined ? (progress ? "running" : "–") : fmtDuration(ep.duration_s) }));
  const rungs = el("ol", { class: "rungs", "aria-label": "Rungs" });
  for (const r of rungList) rungs.append(renderRung(r));
  box.replaceChildren(...[progress, summary, rungs].filter(Boolean));
}

// Counting up a running rung's time touches one text node a second, not the whole view.
export function tickRunning() {
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
  if (r.reason) item.append(el("p", { class: "rung-reason", text: forPerson(r.reason) }));
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

let statusTimer = 0;
function verifySoon() {
  if (!state.live || statusTimer) return;
  statusTimer = setTimeout(() => { statusTimer = 0; refreshVerify(); }, STATUS_DELAY_MS);
}

const VERIFY_KINDS = /^(verify\.|environment\.)/;

// What an event means for this view; returns whether the view must redraw now.
export function onVerifyEvent(e) {
  const d = e.data || {};
  let redraw = false;
  if (e.kind === "verify.epoch.stale") {
    const changed = d.all_changed || d.changed || [];
    const ep = state.verify && state.verify.epoch;
    // Only for the epoch the status shows: the journal replays every earlier epoch's
    // stale events (an earlier host's too) before the status arrives, and a newer epoch's
    // banner comes with the status this event asks for.
    if (ep && e.task === ep.task) {
      state.staleLive = { changed, count: changed.length, epoch: d.epoch, snapshot: d.snapshot || ep.snapshot };
      redraw = true;
    }
  }
  if (e.kind === "verify.epoch.fresh") {
    // The files are back to what the epoch verified: the banner goes at once.
    state.staleLive = null;
    redraw = true;
  }
  if (e.kind === "environment.task.started" && e.task && d.rung) {
    state.rungStarted.set(e.task, e.ts * 1000);
    if (state.rungStarted.size > RUNGS_KEPT) state.rungStarted.delete(state.rungStarted.keys().next().value);
  }
  if (e.kind === "project.opened") state.verifyAvailable = true;
  if (VERIFY_KINDS.test(e.kind) || e.kind === "project.opened") verifySoon();
  return redraw;
}

onRender("verify", renderVerify);
