// The Events view: the journal, newest first, filterable by kind and text. Kept and shown
// rows are bounded; a new event adds its row, a filter change redraws the table.

import { $, el, fmtTime, mark, onRender, state } from "./core.js";

const EVENTS_KEPT = 2000; // journal rows kept in memory
const EVENTS_SHOWN = 300; // rows in the table

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

function renderEvents(dirty) {
  const all = dirty.has("events-all");
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

// Keeps the event; returns nothing (the caller marks the view).
export function keepEvent(e) {
  state.events.push(e);
  if (state.events.length > EVENTS_KEPT) state.events.splice(0, state.events.length - EVENTS_KEPT);
}

export function refilter() {
  mark("events", "events-all");
}

onRender("events", renderEvents);
