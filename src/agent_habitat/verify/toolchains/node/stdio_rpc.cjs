// What the two warm checkers (tsc_warm.cjs, eslint_warm.cjs) share: JSON-RPC in the
// Language Server Protocol's framing (Content-Length headers) on stdin and stdout, so the
// warm checkers' LSP client (verify/rungs/lsp.py) drives both; requests answered one at a
// time, in the order they came; `shutdown`, `exit`; an exit when stdin closes or when the
// owner's pid (`initialize`'s processId) is gone.
"use strict";

// The channel's own write, taken when this module loads: a checker may route what other
// code writes to process.stdout elsewhere (jest_warm.cjs keeps it as a run's output).
const write = process.stdout.write.bind(process.stdout);

function send(obj) {
  const body = Buffer.from(JSON.stringify(obj), "utf8");
  write(`Content-Length: ${body.length}\r\n\r\n`);
  write(body);
}

function watchOwner(processId) {
  const owner = Number(processId || 0);
  if (owner <= 0) return;
  setInterval(() => {
    try {
      process.kill(owner, 0);
    } catch {
      process.exit(0);
    }
  }, 2000).unref();
}

function serve(methods) {
  // `methods`: name → function(params), its result (or a promise of it) the answer.
  let queue = Promise.resolve();
  const handle = (msg) => {
    if (msg.method === "exit") process.exit(0);
    if (msg.id === undefined || msg.id === null) return; // other notifications: none expected
    queue = queue.then(async () => {
      try {
        let result = null;
        if (Object.hasOwn(methods, msg.method)) result = await methods[msg.method](msg.params);
        else if (msg.method !== "shutdown") throw new Error(`unknown method ${msg.method}`);
        send({ jsonrpc: "2.0", id: msg.id, result });
      } catch (err) {
        const message = String((err && err.stack) || err);
        send({ jsonrpc: "2.0", id: msg.id, error: { code: -32603, message } });
      }
    });
  };
  let buffer = Buffer.alloc(0);
  process.stdin.on("data", (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      const match = /content-length:\s*(\d+)/i.exec(buffer.subarray(0, end).toString("ascii"));
      const length = match ? Number(match[1]) : 0;
      if (buffer.length < end + 4 + length) return;
      const body = buffer.subarray(end + 4, end + 4 + length).toString("utf8");
      buffer = buffer.subarray(end + 4 + length);
      handle(JSON.parse(body));
    }
  });
  process.stdin.on("end", () => process.exit(0));
}

module.exports = { send, serve, watchOwner };
