// A warm `tsc --noEmit` for one tsconfig, on the project's own TypeScript compiler API
// (verify/toolchains/node/tsc_warm.py starts it, one per checked workspace, owned by the
// habitat process that started it).
//
// A cold tsc reads, parses and checks the whole program on every verify (8-15 s on a small
// project here); this process keeps the parsed files and a semantic-diagnostics builder, so
// a recheck costs what the changed files reach. Each `check` re-reads the tsconfig, re-stats
// every file the program read (a changed size or mtime, or a path in `touched`, is read
// again; a file whose text is the same keeps its parsed tree), and answers tsc's own output:
// the diagnostics tsc would report, in its order, formatted by `ts.formatDiagnostic` as
// `tsc --pretty false` prints them. A file that appeared or went away, or a changed list of
// root files, starts a fresh builder (parsed files kept): module resolutions are then redone.
// `overlay` maps absolute paths to the text to use instead of the disk's (null: absent),
// for checking HEAD's content of the changed files in the same process.
//
// Protocol: JSON-RPC in the Language Server Protocol's framing (stdio_rpc.cjs, shared with
// eslint_warm.cjs), so the warm checkers' LSP client drives it: `initialize` {processId,
// typescript, project, cwd} (checks once), `habitat/check` {touched, overlay}, `shutdown`,
// `exit`. It exits when stdin closes or its owner's pid (`processId`) is gone.
"use strict";

const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const { serve, watchOwner } = require("./stdio_rpc.cjs");

let ts = null;
let configPath = null;
// Per checked tsconfig (the one asked for, and with project references each project it
// references, transitively): {builder, rootKey, declarationCache}.
const projects = new Map();
const files = new Map(); // path → {text, sf, mtime, size, version}
let overlay = new Map();
let lastOverlay = [];
const probes = new Map(); // "f:path" / "d:path" → what the host answered

function stamp(fileName) {
  try {
    const st = fs.statSync(fileName);
    return { mtime: st.mtimeMs, size: st.size };
  } catch {
    return null;
  }
}

function readText(fileName) {
  if (overlay.has(fileName)) return overlay.get(fileName);
  try {
    return fs.readFileSync(fileName, "utf8");
  } catch {
    return undefined;
  }
}

function makeHost(options, references) {
  const host = ts.createCompilerHost(options, true);
  // With project references, a project reads its references' sources, not their built
  // .d.ts (what tsserver does): nothing has to be built first, and an edit in a referenced
  // project reaches the projects that import it.
  if (references) host.useSourceOfProjectReferenceRedirect = () => true;
  const canonical = (f) => path.resolve(f);
  host.fileExists = (f) => {
    const key = canonical(f);
    const answer = exists(key, false);
    probes.set(`f:${key}`, answer);
    return answer;
  };
  host.directoryExists = (d) => {
    const key = canonical(d);
    const answer = exists(key, true);
    probes.set(`d:${key}`, answer);
    return answer;
  };
  host.readFile = (f) => {
    const text = readText(canonical(f));
    return text === null ? undefined : text;
  };
  host.getSourceFile = (fileName, languageVersionOrOptions, onError) => {
    const key = canonical(fileName);
    const known = files.get(key);
    const lang = JSON.stringify(languageVersionOrOptions);
    if (known && known.valid && known.lang === lang) return known.sf;
    const text = readText(key);
    probes.set(`f:${key}`, typeof text === "string");
    if (text === undefined || text === null) {
      if (text === undefined && onError) onError(`File '${fileName}' not found.`);
      files.delete(key);
      return undefined;
    }
    const st = overlay.has(key) ? { mtime: -1, size: -1 } : stamp(key) || {};
    if (known && known.text === text && known.lang === lang) {
      Object.assign(known, { valid: !overlay.has(key), mtime: st.mtime, size: st.size });
      return known.sf;
    }
    const sf = ts.createSourceFile(fileName, text, languageVersionOrOptions, false);
    sf.version = crypto.createHash("sha1").update(text).digest("hex");
    files.set(key, { text, sf, lang, mtime: st.mtime, size: st.size, valid: !overlay.has(key) });
    return sf;
  };
  return host;
}

function parseConfig(configPath) {
  let fatal = null;
  const host = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      fatal = d;
    },
  };
  const result = ts.getParsedCommandLineOfConfigFile(
    configPath,
    { noEmit: true, pretty: false },
    host,
  );
  return { result, fatal };
}

function formatHost() {
  return {
    getCurrentDirectory: () => ts.sys.getCurrentDirectory(),
    getNewLine: () => ts.sys.newLine,
    getCanonicalFileName: ts.sys.useCaseSensitiveFileNames ? (f) => f : (f) => f.toLowerCase(),
  };
}

function exists(key, dir) {
  if (!dir && overlay.has(key)) return overlay.get(key) !== null;
  return dir ? ts.sys.directoryExists(key) : ts.sys.fileExists(key);
}

function stale(touched) {
  // Marks what must be read again; true when any answer the program's module resolution
  // got about a file or folder's existence would now differ (a fresh builder then resolves
  // again, as tsc --watch does on a failed-lookup location).
  let structural = false;
  for (const [key, entry] of files) {
    const st = overlay.has(key) ? null : stamp(key);
    if (st === null || st.mtime !== entry.mtime || st.size !== entry.size) entry.valid = false;
  }
  for (const key of touched) {
    const entry = files.get(key);
    if (entry) entry.valid = false;
  }
  for (const [probe, answer] of probes) {
    if (exists(probe.slice(2), probe[0] === "d") !== answer) {
      structural = true;
      break;
    }
  }
  if (structural) probes.clear();
  return structural;
}

function declarationDiagnostics(state, own, everything, reached) {
  // tsc emits every file's declarations to find these; a new program's checker would type
  // every file again for it. Kept per file: a file's declaration diagnostics change only
  // when the builder finds it affected (its semantic diagnostics are asked again), as for
  // the builder's own per-file emit diagnostics.
  const program = state.builder.getProgram();
  const declarationCache = state.declarationCache;
  const out = [];
  const live = new Set();
  for (const sf of program.getSourceFiles()) {
    if (!own(sf)) continue;
    live.add(sf.fileName);
    let found = declarationCache.get(sf.fileName);
    if (everything || found === undefined || reached.has(sf.fileName)) {
      found = program.getDeclarationDiagnostics(sf);
      declarationCache.set(sf.fileName, found);
    }
    out.push(...found);
  }
  for (const name of [...declarationCache.keys()]) {
    if (!live.has(name)) declarationCache.delete(name);
  }
  return out;
}

function projectOrder(root) {
  // The tsconfig asked for and, when it has references, each project it references,
  // references first (tsc -b's order); each parsed once.
  const order = [];
  const seen = new Set();
  const visit = (config) => {
    if (seen.has(config)) return;
    seen.add(config);
    const { result, fatal } = parseConfig(config);
    for (const ref of (result && result.projectReferences) || []) {
      visit(path.resolve(ts.resolveProjectReferencePath(ref)));
    }
    order.push({ config, result, fatal });
  };
  visit(root);
  return order;
}

function redirects(parsed, earlier) {
  // The projects whose outputs this one reads as their sources: its own references and,
  // in a solution, every project `tsc -b` builds before it. A project may import
  // a package whose types are another project's outputs without a reference of its own
  // (vscode-languageserver-node's protocol/src/common reads vscode-jsonrpc's lib/*.d.ts:
  // the solution's order builds it first); `tsc -b` reads what that build wrote, this reads
  // the sources they are built from, so nothing has to be built.
  // Such a project need not be composite (client/src/node is not): the program's complaint
  // about a reference it was given and the tsconfig does not name is not tsc's, and is
  // left out (`implicit`).
  const own = parsed.projectReferences || [];
  const named = new Set(own.map((ref) => path.resolve(ts.resolveProjectReferencePath(ref))));
  const before = earlier
    .filter((e) => e.result && e.result.fileNames.length && !named.has(e.config))
    .map((e) => ({ path: e.config }));
  return { references: [...own, ...before], implicit: before.map((ref) => ref.path) };
}

const IMPLICIT_CODES = new Set([6306, 6310]); // must be composite, may not disable emit

function tscsOwn(diagnostics, implicit) {
  if (!implicit.length) return diagnostics;
  return diagnostics.filter((d) => {
    if (!IMPLICIT_CODES.has(d.code)) return true;
    const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    return !implicit.some((config) => text.includes(config));
  });
}

function isSolution(parsed) {
  // tsc -b's isSolutionConfig (not exported by every TypeScript): a project it passes
  // through, building only its references.
  const raw = parsed.raw || {};
  return !parsed.fileNames.length && Object.prototype.hasOwnProperty.call(raw, "references");
}

function checkProject(item, structural, others, earlier) {
  // One project's diagnostics, in tsc's order and with its early stops. With references
  // (`multi`), a project answers only for its own files (its references' sources are in
  // its program, checked in their own project with their own options).
  const { config, result, fatal } = item;
  if (!result) {
    projects.delete(config);
    return { diagnostics: fatal ? [fatal] : [], files: 0, affected: 0, fresh: true };
  }
  const parsed = result;
  if (isSolution(parsed)) {
    // No root files, references: a solution, which `tsc -b` does not build (it reports
    // its config's diagnostics and builds its references). A program of it would read,
    // and check, every @types package its defaults reach.
    projects.delete(config);
    const diagnostics = ts.getConfigFileParsingDiagnostics(parsed);
    return { diagnostics, files: 0, affected: 0, fresh: false };
  }
  const state = projects.get(config) || { builder: null, rootKey: "", declarationCache: new Map() };
  projects.set(config, state);
  const roots = parsed.fileNames.filter((f) => overlay.get(path.resolve(f)) !== null);
  const key = JSON.stringify([roots, parsed.options]);
  const fresh = structural || key !== state.rootKey || state.builder === null;
  state.rootKey = key;
  const { references, implicit } = redirects(parsed, earlier);
  const host = makeHost(parsed.options, references.length > 0);
  state.builder = ts.createSemanticDiagnosticsBuilderProgram(
    roots,
    parsed.options,
    host,
    fresh ? undefined : state.builder,
    ts.getConfigFileParsingDiagnostics(parsed),
    references,
  );
  const builder = state.builder;
  const mine = new Set(parsed.fileNames.map((f) => path.resolve(f)));
  const own = (sf) => {
    const name = path.resolve(sf.fileName);
    return mine.has(name) || !others.has(name);
  };
  let affected = 0;
  let everything = fresh;
  const reached = new Set();
  for (;;) {
    const next = builder.getSemanticDiagnosticsOfNextAffectedFile(undefined, (sf) => !own(sf));
    if (!next) break;
    affected += 1;
    if (next.affected.kind === ts.SyntaxKind.SourceFile) reached.add(next.affected.fileName);
    else everything = true; // the whole program (an options change)
  }
  const program = builder.getProgram();
  const ownFiles = program.getSourceFiles().filter(own);
  const perFile = (get) =>
    ownFiles.length === program.getSourceFiles().length
      ? get(undefined)
      : ownFiles.flatMap((sf) => get(sf));
  // The order and the early stops of tsc's emitFilesAndReportErrors.
  const all = builder.getConfigFileParsingDiagnostics().slice();
  const configCount = all.length;
  all.push(...perFile((sf) => builder.getSyntacticDiagnostics(sf)));
  if (all.length === configCount) {
    all.push(...tscsOwn(builder.getOptionsDiagnostics(), implicit));
    all.push(...tscsOwn(builder.getGlobalDiagnostics(), implicit));
    if (all.length === configCount) all.push(...perFile((sf) => builder.getSemanticDiagnostics(sf)));
    const declarations = parsed.options.declaration || parsed.options.composite;
    if (declarations && all.length === configCount) {
      all.push(...declarationDiagnostics(state, own, everything, reached));
    }
  }
  return { diagnostics: all, files: program.getSourceFiles().length, affected, fresh };
}

function check(params) {
  const started = Date.now();
  overlay = new Map(Object.entries(params.overlay || {}).map(([k, v]) => [path.resolve(k), v]));
  const touched = (params.touched || []).map((f) => path.resolve(f));
  const structural = stale([...new Set([...touched, ...overlay.keys(), ...lastOverlay])]);
  lastOverlay = [...overlay.keys()];
  const phases = [Date.now()];
  const order = projectOrder(configPath);
  phases.push(Date.now());
  for (const config of [...projects.keys()]) {
    if (!order.some((item) => item.config === config)) projects.delete(config);
  }
  const sources = order.map((item) =>
    (item.result ? item.result.fileNames : []).map((f) => path.resolve(f)),
  );
  const answers = order.map((item, i) => {
    const others = new Set(sources.filter((_, j) => j !== i).flat());
    for (const name of sources[i]) others.delete(name);
    return checkProject(item, structural, others, order.slice(0, i));
  });
  phases.push(Date.now());
  const fmt = formatHost();
  const diagnostics = answers.flatMap((a) => ts.sortAndDeduplicateDiagnostics(a.diagnostics));
  phases.push(Date.now());
  const spans = phases.map((t, i) => (i ? t - phases[i - 1] : t - started));
  // What each check cost (re-stat, tsconfigs, programs and affected files, the rest): the log.
  process.stderr.write(`check: ${spans.join(" ")} ${Date.now() - phases[3]} ms\n`);
  const errors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error).length;
  return {
    version: ts.version,
    text: ts.formatDiagnostics(diagnostics, fmt),
    errors,
    projects: order.filter((item) => item.result && item.result.fileNames.length).length,
    files: answers.reduce((n, a) => n + a.files, 0),
    affected: answers.reduce((n, a) => n + a.affected, 0),
    fresh: answers.some((a) => a.fresh),
    probes: probes.size,
    ms: Date.now() - started,
  };
}

function init(params) {
  watchOwner(params.processId);
  process.chdir(params.cwd);
  ts = require(params.typescript);
  configPath = path.resolve(params.project);
  return { version: ts.version, ...check({ touched: [] }) };
}

function once(typescript, project) {
  // `node tsc_warm.cjs --once TYPESCRIPT TSCONFIG`: one check, tsc's output on stdout, exit
  // 2 on an error as tsc does (the cold path of a tsconfig with project references).
  ts = require(typescript);
  configPath = path.resolve(project);
  const answer = check({ touched: [] });
  process.stdout.write(answer.text, () => process.exit(answer.errors ? 2 : 0));
}

if (process.argv[2] === "--once") {
  once(process.argv[3], process.argv[4]);
} else {
  serve({ initialize: init, "habitat/check": (params) => check(params || {}) });
}
