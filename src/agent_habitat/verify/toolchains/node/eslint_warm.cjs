// A warm eslint for one configuration folder, on the project's own eslint through its
// Node API (verify/toolchains/node/eslint_warm.py starts it, one per linted folder, owned by
// the habitat process that started it).
//
// A cold `eslint --format json <files>` starts Node, loads eslint, the configuration and
// every plugin it names (typescript-eslint loads typescript) before it lints one line: most
// of its wall on a small change. This process keeps them loaded; each `lint` makes a fresh
// `ESLint` instance (the configuration is read again, a nested one too; the plugins stay
// loaded), so what it answers is what the CLI would: `lintFiles` on the touched files,
// `lintText` with a file's path for HEAD's content, the report as the JSON formatter
// writes it (the results, rule metadata left out). typescript-eslint's program caches are
// cleared before each lint: another file's change must reach a typed rule.
//
// Every module the configuration loaded from outside node_modules (the config file and
// what it imports) is remembered with a digest of its content; a lint that finds one of them
// changed answers {stale} instead, and the owner starts a new process (the module loader
// never loads a file twice). node_modules, the lockfiles and eslint's own package.json are
// the owner's to watch (its configuration key).
//
// Protocol: JSON-RPC in the Language Server Protocol's framing (Content-Length headers), as
// tsc_warm.cjs: `initialize` {processId, cwd}, `habitat/lint` {files} or {texts: [{path,
// text}]}, `shutdown`, `exit`. It exits when stdin closes or its owner's pid is gone.
"use strict";

const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const nodeModule = require("module");
const { pathToFileURL, fileURLToPath } = require("url");

let cwd = null;
let ESLintClass = null;
let version = "?";
const loaded = new Set(); // file:// URLs the ESM loader resolved
const deps = new Map(); // local module path → digest of its content when first seen
let depsDirty = true;

// ESM modules the configuration imports are seen by a resolve hook (Node ≥ 20.6); CommonJS
// ones are in require.cache.
const HOOK = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const found = await next(specifier, context);
  if (found.url && found.url.startsWith("file:")) port.postMessage(found.url);
  return found;
}
`;

function watchLoads() {
  if (typeof nodeModule.register !== "function") return;
  const { MessageChannel } = require("worker_threads");
  const { port1, port2 } = new MessageChannel();
  port1.on("message", (url) => {
    loaded.add(url);
    depsDirty = true;
  });
  port1.unref();
  const url = `data:text/javascript,${encodeURIComponent(HOOK)}`;
  nodeModule.register(url, { data: { port: port2 }, transferList: [port2] });
}

function digest(file) {
  try {
    return crypto.createHash("sha1").update(fs.readFileSync(file)).digest("hex");
  } catch {
    return null;
  }
}

function local(file) {
  return !file.split(path.sep).includes("node_modules") && path.isAbsolute(file);
}

function learnDeps() {
  if (!depsDirty) return;
  depsDirty = false;
  const files = Object.keys(require.cache);
  for (const url of loaded) {
    try {
      files.push(fileURLToPath(url.split("?")[0]));
    } catch {
      // not a file URL
    }
  }
  for (const file of files) {
    if (local(file) && file !== __filename && !deps.has(file)) deps.set(file, digest(file));
  }
}

function staleDep() {
  for (const [file, known] of deps) {
    if (digest(file) !== known) return file;
  }
  return null;
}

function send(obj) {
  const body = Buffer.from(JSON.stringify(obj), "utf8");
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

function clearTypedCaches() {
  // typescript-eslint keeps a program per tsconfig and re-reads only the linted file: a
  // type another file changed would be stale. Cleared, the next typed lint builds anew.
  for (const key of Object.keys(require.cache)) {
    if (/[\\/]@typescript-eslint[\\/]typescript-estree[\\/]dist[\\/]index\.js$/.test(key)) {
      const api = require.cache[key].exports;
      if (api && typeof api.clearCaches === "function") api.clearCaches();
    }
  }
}

async function loadClass() {
  const req = nodeModule.createRequire(path.join(cwd, "package.json"));
  const api = req("eslint");
  try {
    version = JSON.parse(fs.readFileSync(req.resolve("eslint/package.json"), "utf8")).version;
  } catch {
    version = api.ESLint && api.ESLint.version ? api.ESLint.version : "?";
  }
  // loadESLint (eslint ≥ 8.57) picks the flat or the eslintrc class as the CLI does.
  ESLintClass =
    typeof api.loadESLint === "function" ? await api.loadESLint({ cwd }) : api.ESLint;
}

function report(results) {
  // The JSON formatter's shape: the results as they are (it only stringifies them).
  return JSON.stringify(results);
}

async function lint(params) {
  const started = Date.now();
  learnDeps();
  const changed = staleDep();
  if (changed) return { stale: changed };
  clearTypedCaches();
  const eslint = new ESLintClass({ cwd });
  let results = [];
  if (Array.isArray(params.texts)) {
    for (const item of params.texts) {
      const options = { filePath: item.path, warnIgnored: false };
      results.push(...(await eslint.lintText(item.text, options)));
    }
  } else {
    results = await eslint.lintFiles(params.files || []);
  }
  await new Promise((resolve) => setImmediate(resolve)); // the resolve hook's messages
  learnDeps();
  const errors = results.reduce((n, r) => n + (r.errorCount || 0) + (r.fatalErrorCount || 0), 0);
  return {
    version,
    report: report(results),
    errors,
    files: results.length,
    deps: deps.size,
    ms: Date.now() - started,
  };
}

async function init(params) {
  const owner = Number(params.processId || 0);
  if (owner > 0) {
    setInterval(() => {
      try {
        process.kill(owner, 0);
      } catch {
        process.exit(0);
      }
    }, 2000).unref();
  }
  cwd = path.resolve(params.cwd);
  process.chdir(cwd);
  watchLoads();
  await loadClass();
  // Load the configuration and its plugins now, so the first verify is warm: linting a
  // path that no file has loads them and reports nothing.
  const probe = path.join(cwd, "__habitat_warm_up__.js");
  const eslint = new ESLintClass({ cwd });
  const ignored = await eslint.isPathIgnored(probe);
  if (!ignored) await eslint.lintText("", { filePath: probe, warnIgnored: false });
  await new Promise((resolve) => setImmediate(resolve));
  learnDeps();
  return { version, deps: deps.size, config: pathToFileURL(cwd).href };
}

let queue = Promise.resolve();

function handle(msg) {
  if (msg.method === "exit") process.exit(0);
  if (msg.id === undefined || msg.id === null) return; // other notifications: none expected
  queue = queue.then(async () => {
    try {
      let result = null;
      if (msg.method === "initialize") result = await init(msg.params);
      else if (msg.method === "habitat/lint") result = await lint(msg.params || {});
      else if (msg.method !== "shutdown") throw new Error(`unknown method ${msg.method}`);
      send({ jsonrpc: "2.0", id: msg.id, result });
    } catch (err) {
      const message = String((err && err.stack) || err);
      send({ jsonrpc: "2.0", id: msg.id, error: { code: -32603, message } });
    }
  });
}

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
