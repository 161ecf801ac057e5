// A reporter for the node test runner (`node --test --test-reporter=<this file>`), beside
// its junit report: each test that ended, in the order the tests started, as one JSON line
// {file, name, key, failed, suite}. `key` is the test's full name (its describe blocks' and
// its own, joined by " > ") after its file, as the vitest and jest keys are; `suite` marks a
// describe block (its failure is its children's). verify/toolchains/node/head_tests.py keys
// a red run's failures with it and asks HEAD about the same keys (node 20 and later: each
// event names its file).
"use strict";

module.exports = async function* keys(source) {
  const names = new Map(); // file → the names of the tests under way, by nesting
  const order = [];
  const byStart = new Map(); // `${file}\0${nesting}\0${name}` → the entries started so
  for await (const event of source) {
    const data = event.data || {};
    const file = data.file || "";
    const nesting = Number(data.nesting || 0);
    if (event.type === "test:start") {
      const stack = (names.get(file) || []).slice(0, nesting);
      stack[nesting] = String(data.name);
      names.set(file, stack);
      const entry = { file, name: String(data.name), key: stack.join(" > "), ended: false };
      const id = `${file}\0${nesting}\0${data.name}`;
      if (!byStart.has(id)) byStart.set(id, []);
      byStart.get(id).push(entry);
      order.push(entry);
    } else if (event.type === "test:pass" || event.type === "test:fail") {
      const id = `${file}\0${nesting}\0${data.name}`;
      const entry = (byStart.get(id) || []).find((e) => !e.ended);
      if (!entry) continue; // a file's own failure (it did not load): no test of it started
      entry.ended = true;
      entry.failed = event.type === "test:fail";
      entry.suite = Boolean(data.details && data.details.type === "suite");
    }
  }
  for (const entry of order) {
    if (!entry.ended) continue;
    const { file, name, key, failed, suite } = entry;
    yield JSON.stringify({ file, name, key, failed, suite }) + "\n";
  }
};
