// Single-line mutation candidates of TypeScript/JavaScript sources, for
// bench/ladder_harness_node.py: node ladder_harness_node_mutate.cjs <project> <file>...
// Uses the project's own typescript to scan tokens (so strings and comments are never
// touched) and to parse every candidate (a candidate with a syntax error is dropped).
// Prints a JSON list of {file, line, kind, before, after}.
const { createRequire } = require("node:module");
const fs = require("node:fs");
const path = require("node:path");
const [given, ...files] = process.argv.slice(2);
const root = path.resolve(given);
const ts = createRequire(path.join(root, "package.json"))("typescript");
const K = ts.SyntaxKind;
const FLIPS = new Map([
  [K.EqualsEqualsEqualsToken, ["!==", "comparison"]],
  [K.ExclamationEqualsEqualsToken, ["===", "comparison"]],
  [K.EqualsEqualsToken, ["!=", "comparison"]],
  [K.ExclamationEqualsToken, ["==", "comparison"]],
  [K.LessThanToken, [">=", "comparison"]],
  [K.GreaterThanEqualsToken, ["<", "comparison"]],
  [K.GreaterThanToken, ["<=", "comparison"]],
  [K.LessThanEqualsToken, [">", "comparison"]],
  [K.PlusToken, ["-", "operator"]],
  [K.MinusToken, ["+", "operator"]],
  [K.AsteriskToken, ["/", "operator"]],
  [K.SlashToken, ["*", "operator"]],
  [K.AmpersandAmpersandToken, ["||", "operator"]],
  [K.BarBarToken, ["&&", "operator"]],
  [K.TrueKeyword, ["false", "boolean"]],
  [K.FalseKeyword, ["true", "boolean"]],
]);

function parses(name, text) {
  const out = ts.transpileModule(text, { fileName: name, reportDiagnostics: true });
  return !(out.diagnostics || []).length;
}

const candidates = [];
for (const rel of files) {
  const text = fs.readFileSync(path.join(root, rel), "utf8");
  const lines = text.split("\n");
  const sf = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true);
  const add = (start, end, replacement, kind) => {
    const line = sf.getLineAndCharacterOfPosition(start).line;
    if (sf.getLineAndCharacterOfPosition(end).line !== line) return;
    const mutated = text.slice(0, start) + replacement + text.slice(end);
    const after = mutated.split("\n")[line];
    if (after === lines[line] || !parses(rel, mutated)) return;
    candidates.push({ file: rel, line: line + 1, kind, before: lines[line], after });
  };
  const visit = (node) => {
    if (ts.isTypeNode(node) || ts.isImportDeclaration(node) || ts.isTypeAliasDeclaration(node)
        || ts.isInterfaceDeclaration(node)) return;
    if (ts.isBinaryExpression(node) && FLIPS.has(node.operatorToken.kind)) {
      const [to, kind] = FLIPS.get(node.operatorToken.kind);
      add(node.operatorToken.getStart(sf), node.operatorToken.end, to, kind);
    } else if (node.kind === K.TrueKeyword || node.kind === K.FalseKeyword) {
      const [to, kind] = FLIPS.get(node.kind);
      add(node.getStart(sf), node.end, to, kind);
    } else if (ts.isNumericLiteral(node) && /^\d+$/.test(node.text)) {
      add(node.getStart(sf), node.end, String(Number(node.text) + 1), "off-by-one");
    } else if (ts.isExpressionStatement(node)) {
      add(node.getStart(sf), node.end, ";", "removed-statement");
    } else if (ts.isReturnStatement(node) && node.expression) {
      add(node.expression.getStart(sf), node.expression.end, "undefined as any", "swapped-return");
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
process.stdout.write(JSON.stringify(candidates));
