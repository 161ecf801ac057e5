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
// Protocol: JSON-RPC in the Language Server Protocol's framing (stdio_rpc.cjs, as
// tsc_warm.cjs): `initialize` {processId, cwd}, `habitat/lint` {files} or {texts: [{path,
// text}]}, `shutdown`, `exit`. It exits when stdin closes or its owner's pid is gone.
"use strict";

const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const nodeModule = require("module");
const { pathToFileURL, fileURLToPath } = require("url");
const { serve, watchOwner } = require("./stdio_rpc.cjs");

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
  watchOwner(params.processId);
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

serve({ initialize: init, "habitat/lint": (params) => lint(params || {}) });
