// Whether each changed JavaScript/TypeScript file is its HEAD's code but for comments that
// nothing can read (verify/toolchains/node/comments.py asks, with the project's own
// typescript): `node comments.cjs <typescript folder>`, a JSON list of {path, head, now} on
// stdin; on stdout {same: bool, why: string, files: [{path, why}]}, `why` naming the file
// and the reason that makes it more than such comments ("" for one that is not).
//
// The same code: both texts parse without an error to the same tokens (the parser's, so a
// regular expression or a template is one token whatever it holds). A comment that was
// added, removed or changed must be prose: not a directive or pragma that a tool reads
// (`@ts-expect-error`, `@jsx`, `@jest-environment`, JSDoc tags, which type a JavaScript
// file, `/// <reference`, `//# sourceMappingURL`, `/*!` licences, `istanbul`/`c8`/`v8`
// ignores, eslint/prettier/biome switches, bundlers' `@__PURE__` and magic comments), and
// outside every function and class: their source text, comments included, is what
// `Function.prototype.toString` returns, which a test or a library may read.
"use strict";

const path = require("path");

const DIRECTIVE =
  /[@#<]|^\s*!|istanbul|\bc8\b|\bv8\b|eslint|tslint|jshint|jscs|prettier|biome|deno|\bglobals?\b|exported|webpack|vite|rollup|esbuild|swc|terser|babel|\bjsx\b|\bflow\b|PURE|SIDE_EFFECTS|source(Mapping)?URL|licen[cs]e|preserve|noinspection|coverage|lint|\bts-|\bjs-/i;

function main() {
  const ts = require(path.resolve(process.argv[2]));
  let input = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => (input += chunk));
  process.stdin.on("end", () => {
    let answer;
    try {
      answer = check(ts, JSON.parse(input));
    } catch (err) {
      answer = { same: false, why: `could not compare: ${String(err && err.message) || err}` };
    }
    process.stdout.write(JSON.stringify(answer));
  });
}

function kindOf(ts, file) {
  const ext = path.extname(file).toLowerCase();
  if (ext === ".tsx") return ts.ScriptKind.TSX;
  if (ext === ".jsx") return ts.ScriptKind.JSX;
  if ([".js", ".mjs", ".cjs"].includes(ext)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

function parse(ts, file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kindOf(ts, file));
  const errors = sf.parseDiagnostics || [];
  const tokens = [];
  const functions = []; // [start, end) of each function's and class's source text
  const visit = (node) => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) {
      return; // a JSDoc comment: compared as a comment below
    }
    if (ts.isFunctionLike(node) || ts.isClassLike(node)) {
      functions.push([node.getStart(sf), node.end]);
    }
    const children = node.getChildren(sf);
    if (children.length === 0) {
      if (node.kind !== ts.SyntaxKind.EndOfFileToken) tokens.push(`${node.kind}:${node.getText(sf)}`);
      return;
    }
    // The tree's shape too: "return", a line break, "x" has the tokens of "return x".
    tokens.push(`(${node.kind}`);
    for (const child of children) visit(child);
    tokens.push(")");
  };
  visit(sf);
  return { sf, errors, tokens, functions };
}

function check(ts, files) {
  const answers = files.map((file) => ({ path: file.path, why: compare(ts, file) }));
  const first = answers.find((a) => a.why);
  return { same: !first, why: first ? first.why : "", files: answers };
}

function compare(ts, file) {
  // Why the file is more than its HEAD's code with prose comments; "" when it is not.
  const head = parse(ts, file.path, file.head);
  const now = parse(ts, file.path, file.now);
  if (head.errors.length || now.errors.length) return `${file.path} does not parse`;
  if (head.tokens.length !== now.tokens.length || head.tokens.some((t, i) => t !== now.tokens[i])) {
    return `${file.path}: its code changed`;
  }
  const before = commentsOf(ts, head);
  const after = commentsOf(ts, now);
  return differing(file.path, before, after, head) || differing(file.path, after, before, now) || "";
}

function commentsOf(ts, parsed) {
  // The leading and trailing comments of every token, and those before the end of the file.
  const { sf } = parsed;
  const text = sf.text;
  const found = new Map();
  const take = (ranges) => {
    for (const r of ranges || []) found.set(r.pos, { pos: r.pos, end: r.end, text: text.slice(r.pos, r.end) });
  };
  const visit = (node) => {
    take(ts.getLeadingCommentRanges(text, node.pos));
    take(ts.getTrailingCommentRanges(text, node.end));
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    for (const child of node.getChildren(sf)) visit(child);
  };
  visit(sf);
  take(ts.getLeadingCommentRanges(text, 0));
  return [...found.values()];
}

function differing(file, mine, theirs, parsed) {
  // The first comment of `mine` that `theirs` does not have as often, if it is not prose
  // outside every function; else null.
  const left = new Map();
  for (const c of theirs) left.set(c.text, (left.get(c.text) || 0) + 1);
  for (const c of mine) {
    const n = left.get(c.text) || 0;
    if (n > 0) {
      left.set(c.text, n - 1);
      continue;
    }
    const line = parsed.sf.getLineAndCharacterOfPosition(c.pos).line + 1;
    const body = c.text.replace(/^\/\/|^\/\*+|\*+\/$/g, "");
    if (c.text.startsWith("/*!") || c.text.startsWith("///") || c.text.startsWith("//#") || DIRECTIVE.test(body)) {
      return `${file}:${line}: a comment a tool may read changed (${c.text.slice(0, 60).split("\n")[0]})`;
    }
    if (parsed.functions.some(([s, e]) => s <= c.pos && c.end <= e)) {
      return `${file}:${line}: a comment inside a function or class changed (its toString() shows it)`;
    }
  }
  return null;
}

main();
