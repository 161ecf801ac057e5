// A warm jest for one workspace, on the project's own jest through its Node API (jest-cli's
// `buildArgv`, @jest/core's `runCLI`, as `jest` itself runs them), started by
// verify/toolchains/node/jest_warm.py and owned by the habitat process that started it.
//
// A cold `jest --findRelatedTests` starts Node, loads jest and reads the configuration
// before it runs one test: a `jest.config.ts` is compiled and type-checked by ts-node, 17 of
// the 27 CPU-seconds of ms 3.0.0's related run. This process keeps jest and the loaded
// configuration (the module loader's cache) between runs; each run is `runCLI` with the
// arguments the CLI would get, so jest reads the configuration again (normalized anew, the
// same object), builds its haste map and its dependency resolver anew, and writes the same
// JSON report.
//
// The tests never run in this process: a run that jest would run in band (one worker, one
// test file, quick tests) is given `workerIdleMemoryLimit` (jest ≥ 29: a memory limit means
// workers), so each run's tests are in fresh worker processes that end with the run, as
// jest's watch mode keeps its tests out of its own long-lived process; the project's own
// limit, when it sets one, is kept. A configuration that asks for in-band runs
// (`detectOpenHandles`) is answered {inBand}, and the owner runs the CLI. Each run gets the
// environment it is given (the substrate's variables), which the workers inherit.
//
// Every module loaded from outside node_modules (the configuration file and what it
// imports, a global setup) is remembered with a digest of its content; a run that finds one
// changed answers {stale}, and the owner starts a new process. node_modules, the lockfiles
// and jest's own package.json are the owner's to watch (its configuration key).
//
// What jest writes to stdout and stderr during a run is the run's output (the answer's
// `output`); the channel (stdio_rpc.cjs) keeps its own stdout.
//
// Protocol: JSON-RPC in the Language Server Protocol's framing (stdio_rpc.cjs): `initialize`
// {processId, cwd, transpileTsConfig?}, `habitat/run` {args, env, stream?}, `shutdown`, `exit`. It
// exits when stdin closes or its owner's pid is gone.
"use strict";

const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const nodeModule = require("module");
const { fileURLToPath } = require("url");
const { serve, watchOwner } = require("./stdio_rpc.cjs");

const OUTPUT_CAP = 4 * 1024 * 1024;
const STREAM = path.join(__dirname, "failed_stream.cjs");
let cwd = null;
let cli = null;
let core = null;
let config = null;
let version = "?";
let output = null; // the current run's output, null between runs
const loaded = new Set(); // file:// URLs the ESM loader resolved
const deps = new Map(); // local module path → digest of its content when first seen

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
  port1.on("message", (url) => loaded.add(url));
  port1.unref();
  const url = `data:text/javascript,${encodeURIComponent(HOOK)}`;
  nodeModule.register(url, { data: { port: port2 }, transferList: [port2] });
}

function capture(stream) {
  const write = stream.write.bind(stream);
  stream.write = (chunk, encoding, callback) => {
    if (output !== null && output.length < OUTPUT_CAP) {
      output += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    }
    // stderr goes on to the log as well; stdout is the channel's, never written here.
    if (stream === process.stderr) return write(chunk, encoding, callback);
    const done = typeof encoding === "function" ? encoding : callback;
    if (typeof done === "function") process.nextTick(done);
    return true;
  };
}

function digest(file) {
  try {
    return crypto.createHash("sha1").update(fs.readFileSync(file)).digest("hex");
  } catch {
    return null;
  }
}

function learnDeps() {
  const files = Object.keys(require.cache);
  for (const url of loaded) {
    try {
      files.push(fileURLToPath(url.split("?")[0]));
    } catch {
      // not a file URL
    }
  }
  for (const file of files) {
    const local = path.isAbsolute(file) && !file.split(path.sep).includes("node_modules");
    if (local && !file.startsWith(__dirname + path.sep) && !deps.has(file)) {
      deps.set(file, digest(file));
    }
  }
}

function staleDep() {
  for (const [file, known] of deps) {
    if (digest(file) !== known) return file;
  }
  return null;
}

function withEnv(env, work) {
  const saved = { ...process.env };
  const set = (values) => {
    for (const key of Object.keys(process.env)) delete process.env[key];
    Object.assign(process.env, values);
  };
  set(env);
  return work().finally(() => set(saved));
}

async function run(params) {
  const started = Date.now();
  await new Promise((resolve) => setImmediate(resolve)); // the resolve hook's messages
  learnDeps();
  const changed = staleDep();
  if (changed) return { stale: changed };
  output = "";
  try {
    return await withEnv(params.env || process.env, async () => {
      const argv = await cli.buildArgv(params.args || []);
      const read = await config.readConfigs(argv, [cwd]);
      const global = read.globalConfig;
      if (global.detectOpenHandles) return { inBand: "detectOpenHandles" };
      if (global.workerIdleMemoryLimit === undefined || global.workerIdleMemoryLimit === null) {
        // Workers, never this process: a limit no worker reaches (all of the memory).
        argv.workerIdleMemoryLimit = "100%";
      }
      if (params.stream) {
        // The project's reporters (jest's default when it names none), and failed_stream.cjs
        // beside them: each file with a failed test as jest reports it (head_ahead.py).
        const own = global.reporters || [["default", {}]];
        argv.reporters = [...own, [STREAM, { file: params.stream }]];
      }
      let code;
      try {
        const { results, globalConfig } = await core.runCLI(argv, [cwd]);
        code = !results || results.success ? 0 : globalConfig.testFailureExitCode;
      } catch (err) {
        // The CLI prints the error and exits 1 (jest-cli's `run`).
        output += `${String((err && err.stack) || err)}\n`;
        code = 1;
      }
      await new Promise((resolve) => setImmediate(resolve));
      learnDeps();
      return { code, output, version, deps: deps.size, ms: Date.now() - started };
    });
  } finally {
    output = null;
  }
}

async function init(params) {
  watchOwner(params.processId);
  cwd = path.resolve(params.cwd);
  process.chdir(cwd);
  watchLoads();
  capture(process.stdout);
  capture(process.stderr);
  const req = nodeModule.createRequire(path.join(cwd, "package.json"));
  const jestDir = path.dirname(req.resolve("jest/package.json"));
  version = JSON.parse(fs.readFileSync(path.join(jestDir, "package.json"), "utf8")).version;
  const fromJest = nodeModule.createRequire(path.join(jestDir, "package.json"));
  const cliDir = path.dirname(fromJest.resolve("jest-cli/package.json"));
  const fromCli = nodeModule.createRequire(path.join(cliDir, "package.json"));
  cli = fromCli("jest-cli");
  core = fromCli("@jest/core");
  const fromCore = nodeModule.createRequire(fromCli.resolve("@jest/core"));
  config = fromCore("jest-config");
  // Read the configuration now (a jest.config.ts compiled here), so the first run is warm.
  // `transpileTsConfig`: the owner found it HEAD's own, as is what its type check reads
  // (jest_config.py), so ts-node, registered once here, compiles it without that check;
  // what transpiling still reports (the options' own diagnostics: ms 3.0.0's
  // `isolatedDeclarations` without `declaration`, TS5069, which ts-node's transpiler sets
  // off) is logged, not thrown, as it is HEAD's too.
  const transpile = {};
  if (params.transpileTsConfig) {
    for (const name of ["TS_NODE_TRANSPILE_ONLY", "TS_NODE_LOG_ERROR"]) {
      if (process.env[name] === undefined) transpile[name] = "true";
    }
  }
  Object.assign(process.env, transpile);
  output = "";
  try {
    await config.readConfigs(await cli.buildArgv([]), [cwd]);
  } finally {
    output = null;
    for (const name of Object.keys(transpile)) delete process.env[name];
  }
  await new Promise((resolve) => setImmediate(resolve));
  learnDeps();
  return { version, deps: deps.size };
}

serve({ initialize: init, "habitat/run": (params) => run(params || {}) });
