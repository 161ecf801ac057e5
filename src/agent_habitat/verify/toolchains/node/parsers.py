"""The Node tools' output as `Diagnostic`s: eslint and biome JSON, `tsc --pretty false`
lines, the jest-shaped JSON report of vitest and jest, and the node test runner's JUnit."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

from ...models import Diagnostic, Severity
from ...tracebacks import relative

__all__ = [
    "jest_outcomes",
    "junit_skipped",
    "parse_biome",
    "parse_eslint",
    "parse_fail_lines",
    "parse_jest_json",
    "parse_node_junit",
    "parse_tsc",
    "suite_counts",
    "suite_skipped",
]

_CAP = 2000


_OPENERS = re.compile(r"^[\[{]", re.MULTILINE)


def _load(text: str) -> Any:
    """The JSON document in `text`: all of it, or the first one that starts a line (a tool's
    own warnings may come before it in the same stream)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    for m in _OPENERS.finditer(text):
        try:
            return decoder.raw_decode(text, m.start())[0]
        except ValueError:
            continue
    return None


def parse_eslint(text: str, root: Path, stdin_file: str | None = None) -> list[Diagnostic]:
    """`eslint --format json`: one entry per file, its `messages`. A message without a rule
    is a parse error (`fatal`). `stdin_file` names the file of a `--stdin` run."""
    items = _load(text or "[]")
    out: list[Diagnostic] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        file = stdin_file or relative(str(item.get("filePath", "")), root)
        for msg in item.get("messages") or []:
            severity: Severity = "error" if msg.get("severity") == 2 else "warning"
            out.append(
                Diagnostic(
                    file=file,
                    line=msg.get("line"),
                    col=msg.get("column"),
                    code=msg.get("ruleId") or ("syntax" if msg.get("fatal") else None),
                    severity=severity,
                    message=str(msg.get("message", ""))[:_CAP],
                    source="eslint",
                )
            )
    return out


def _line_col(path: Path, offset: int, source: object) -> tuple[int, int] | None:
    if not isinstance(source, str):
        try:
            source = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    assert isinstance(source, str)
    data = source.encode("utf-8")[:offset].decode("utf-8", "replace")
    return data.count("\n") + 1, len(data) - (data.rfind("\n") + 1) + 1


def parse_biome(text: str, cwd: Path, root: Path | None = None) -> list[Diagnostic]:
    """`biome lint --reporter=json` run in `cwd`: `diagnostics`, each located by a byte span
    in its file (line and column from the report's `sourceCode`, else the file); paths
    relative to `root` (default `cwd`)."""
    data = _load(text or "{}")
    out: list[Diagnostic] = []
    for item in data.get("diagnostics") or [] if isinstance(data, dict) else []:
        loc = item.get("location") or {}
        path = loc.get("path")
        file = path.get("file") if isinstance(path, dict) else path
        where = None
        span = loc.get("span")
        if file and isinstance(span, list) and span:
            where = _line_col(cwd / str(file), int(span[0]), loc.get("sourceCode"))
        category = str(item.get("category") or "")
        severity: Severity = "error" if item.get("severity") in ("error", "fatal") else "warning"
        out.append(
            Diagnostic(
                file=relative(str(cwd / str(file)), root or cwd) if file else None,
                line=where[0] if where else None,
                col=where[1] if where else None,
                code=category.rsplit("/", 1)[-1] or None,
                severity=severity,
                message=str(item.get("description") or category)[:_CAP],
                source="biome",
            )
        )
    return out


_TSC = re.compile(
    r"^(?P<file>[^\s(][^(\n]*)\((?P<line>\d+),(?P<col>\d+)\): (?P<sev>error|warning) "
    r"(?P<code>TS\d+): (?P<msg>.*)$"
)
_TSC_GLOBAL = re.compile(r"^(?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.*)$")


def parse_tsc(text: str, root: Path) -> list[Diagnostic]:
    """`tsc --pretty false`: `file(line,col): error TSxxxx: message`, continuation lines
    indented under it; `error TSxxxx:` without a file for the project's own setup."""
    out: list[Diagnostic] = []
    for raw in text.splitlines():
        m = _TSC.match(raw) or _TSC_GLOBAL.match(raw)
        if m is None:
            if out and raw.startswith("  ") and raw.strip():
                last = out[-1]
                out[-1] = last.model_copy(
                    update={"message": f"{last.message}\n{raw.strip()}"[:_CAP]}
                )
            continue
        groups = m.groupdict()
        sev: Severity = "error" if groups["sev"] == "error" else "warning"
        out.append(
            Diagnostic(
                file=relative(groups["file"], root) if groups.get("file") else None,
                line=int(groups["line"]) if groups.get("line") else None,
                col=int(groups["col"]) if groups.get("col") else None,
                code=groups["code"],
                severity=sev,
                message=groups["msg"][:_CAP],
                source="tsc",
            )
        )
    return out


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _first_line(messages: list[Any]) -> str:
    text = _ANSI.sub("", "\n".join(str(m) for m in messages)).strip()
    return text[:_CAP]


_VALUE = re.compile(r"^(?P<name>(?:Expected|Received)[\w ]{0,40}): (?P<value>.+)$", re.MULTILINE)


def _with_values(message: str) -> str:
    """jest's `Expected: …` and `Received: …` lines joined to the message's first line, as
    cargo's `left: 2; right: 4` are (a verdict shows a finding's first line)."""
    first, _, rest = message.partition("\n")
    values = [f"{m['name']}: {m['value'].strip()[:200]}" for m in _VALUE.finditer(rest)]
    return "; ".join([first, *values]) + (f"\n{rest}" if rest else "") if values else message


def _frame_line(message: str, root: Path, file: str) -> int | None:
    """The line of the first stack frame in the test file itself (jest's JSON report has no
    location unless asked with --testLocationInResults)."""
    for m in _FRAME.finditer(message):
        if relative(m["path"], root) == file:
            return int(m["line"])
    return None


def parse_jest_json(text: str, root: Path, tool: str) -> list[Diagnostic]:
    """The jest-shaped JSON report (`jest --json`, `vitest --reporter=json`): a failed test
    per failing assertion; a test file that failed without one (it did not load: a syntax
    or import error) as one finding on the file."""
    data = _load(text or "{}")
    out: list[Diagnostic] = []
    for suite in data.get("testResults") or [] if isinstance(data, dict) else []:
        file = relative(str(suite.get("name", "")), root)
        failed = [a for a in suite.get("assertionResults") or [] if a.get("status") == "failed"]
        for case in failed:
            loc = case.get("location") or {}
            name = case.get("fullName") or case.get("title") or "?"
            message = _with_values(_first_line(case.get("failureMessages") or []))
            out.append(
                Diagnostic(
                    file=file,
                    line=loc.get("line") or _frame_line(message, root, file),
                    col=loc.get("column"),
                    code="failed",
                    message=f"{file} > {name}: {message}"[:_CAP],
                    source=tool,
                )
            )
        if not failed and suite.get("status") == "failed":
            message = _first_line([suite.get("message") or "the test file failed to run"])
            out.append(
                Diagnostic(
                    file=file,
                    code="suite-error",
                    message=f"{file}: {message}"[:_CAP],
                    source=tool,
                )
            )
    return out


def jest_outcomes(text: str, root: Path, *, ran_only: bool = False) -> Counter[str] | None:
    """Each test of a jest-shaped report by its key, `file > full name` (the start of its
    `parse_jest_json` finding's message), with how many times it failed: a test that passed
    is there at 0. `ran_only`: a test that did not run (skipped, todo, left out by a name
    pattern) is not there. None when the text is not such a report."""
    data = _load(text or "")
    if not isinstance(data, dict) or "testResults" not in data:
        return None
    out: Counter[str] = Counter()
    for suite in data.get("testResults") or []:
        file = relative(str(suite.get("name", "")), root)
        for case in suite.get("assertionResults") or []:
            if ran_only and case.get("status") not in ("passed", "failed"):
                continue
            key = f"{file} > {case.get('fullName') or case.get('title') or '?'}"
            out[key] += case.get("status") == "failed"
    return out


def suite_counts(text: str) -> tuple[int, int] | None:
    """(tests run, failed) of a jest-shaped report; None when it is not one."""
    data = _load(text or "")
    if not isinstance(data, dict) or "numTotalTests" not in data:
        return None
    return int(data.get("numTotalTests") or 0), int(data.get("numFailedTests") or 0)


def suite_skipped(text: str) -> int:
    """How many tests of a jest-shaped report were skipped or todo (counted in its total)."""
    data = _load(text or "")
    if not isinstance(data, dict):
        return 0
    return int(data.get("numPendingTests") or 0) + int(data.get("numTodoTests") or 0)


def junit_skipped(path: Path) -> int:
    """How many test cases of a junit report were skipped (0 when there is no report)."""
    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError):
        return 0
    return sum(1 for case in tree.iter("testcase") if case.find("skipped") is not None)


_FRAME = re.compile(r"(?:file://)?(?P<path>/[^\s:()]+):(?P<line>\d+):(?P<col>\d+)")


def parse_node_junit(path: Path, root: Path) -> tuple[list[Diagnostic], int] | None:
    """`node --test --test-reporter=junit`: (a finding per failed test, located at the
    deepest frame of its stack inside the project but outside node_modules; tests run), or
    None when there is no report."""
    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError):
        return None
    out: list[Diagnostic] = []
    cases = 0
    for case in tree.iter("testcase"):
        cases += 1
        failure = case.find("failure")
        if failure is None:
            continue
        body = failure.text or ""
        file, line = None, None
        for m in _FRAME.finditer(body):
            rel = relative(m["path"], root)
            if not rel.startswith("/") and "node_modules" not in rel:
                file, line = rel, int(m["line"])
                break
        message = failure.get("message") or body.strip().splitlines()[0:1] or ["failed"]
        text = message if isinstance(message, str) else message[0]
        out.append(
            Diagnostic(
                file=file,
                line=line,
                code=failure.get("type") or "failed",
                message=f"{case.get('name', '?')}: {text}"[:_CAP],
                source="node-test",
            )
        )
    return out, cases


_FAIL = re.compile(r"^\s*(?:FAIL|×|✗|✖)\s+(?P<file>[^\s>]+\.[cm]?[jt]sx?)(?:\s+>\s+(?P<name>.*))?$")


def parse_fail_lines(text: str, root: Path, source: str) -> list[Diagnostic]:
    """A test script's `FAIL <file> [> test]` lines (vitest's and jest's default reporters),
    for a script whose report is the console."""
    out: list[Diagnostic] = []
    seen: set[tuple[str, str]] = set()
    for raw in text.splitlines():
        m = _FAIL.match(_ANSI.sub("", raw))
        if m is None:
            continue
        key = (m["file"], m["name"] or "")
        if key in seen:
            continue
        seen.add(key)
        name = f" > {m['name'].strip()}" if m["name"] else ""
        out.append(
            Diagnostic(
                file=relative(m["file"], root),
                code="failed",
                message=f"{m['file']}{name}"[:_CAP],
                source=source,
            )
        )
    return out
