"""Turn tool output into `Diagnostic`s: ruff JSON, mypy text, pyright JSON, ty's concise lines,
pyrefly JSON, pytest JUnit XML
(or its `-rfE` summary lines), compileall errors, and `file:line[:col]: message` lines of
any configured command."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .models import Diagnostic, Severity
from .tracebacks import in_project, in_root_terms, raised, relative

__all__ = [
    "JunitCounts",
    "junit_counts",
    "junit_key",
    "parse_compileall",
    "parse_generic",
    "parse_junit",
    "parse_mypy",
    "parse_pyrefly",
    "parse_pyright",
    "parse_pytest_summary",
    "parse_ruff",
    "parse_ty",
    "relative",
]

_MESSAGE_CAP = 2000


def parse_ruff(text: str, root: Path) -> list[Diagnostic]:
    """`ruff check --output-format json`: a JSON array of violations."""
    try:
        items: list[dict[str, Any]] = json.loads(text or "[]")
    except json.JSONDecodeError:
        return []
    out: list[Diagnostic] = []
    for item in items:
        loc = item.get("location") or {}
        out.append(
            Diagnostic(
                file=relative(str(item.get("filename", "")), root),
                line=loc.get("row"),
                col=loc.get("column"),
                code=item.get("code") or "syntax",
                severity="error",
                message=str(item.get("message", ""))[:_MESSAGE_CAP],
                source="ruff",
            )
        )
    return out


_MYPY_LINE = re.compile(
    r"^(?P<file>[^:\n]+?):(?:(?P<line>\d+):)?(?:(?P<col>\d+):)?\s(?P<sev>error|warning|note):\s"
    r"(?P<msg>.*?)(?:\s{2}\[(?P<code>[a-z0-9-]+)\])?$",
    re.MULTILINE,
)


def _severity(raw: str, warning: str = "warning") -> Severity:
    """A tool's severity word as ours: its `warning` word, `error`, and anything else a note."""
    return "error" if raw == "error" else "warning" if raw == warning else "note"


def _from_lines(
    pattern: re.Pattern[str], text: str, root: Path, source: str, *, strip: bool = False
) -> list[Diagnostic]:
    """A diagnostic for each line `pattern` matches: its groups `file`, `line` and `col`
    (either may be absent), `sev`, `code` and `msg` (`strip`ped when asked)."""
    return [
        Diagnostic(
            file=relative(m["file"], root),
            line=int(m["line"]) if m["line"] else None,
            col=int(m["col"]) if m["col"] else None,
            code=m["code"],
            severity=_severity(m["sev"]),
            message=(m["msg"].strip() if strip else m["msg"])[:_MESSAGE_CAP],
            source=source,
        )
        for m in pattern.finditer(text)
    ]


def _json_after_noise(text: str) -> Any:
    """The JSON object that starts at the first `{` of `text` (a tool may print lines before
    it), or None when there is none."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[start:])[0]
    except json.JSONDecodeError:
        return None


def parse_mypy(text: str, root: Path) -> list[Diagnostic]:
    """mypy/dmypy text output with `--show-column-numbers --show-error-codes`."""
    # Not stripped: a note's indented lines (an overload's signatures) keep their indent.
    return _from_lines(_MYPY_LINE, text, root, "mypy")


def parse_pyright(text: str, root: Path, source: str = "pyright") -> list[Diagnostic]:
    """`pyright --outputjson` / `basedpyright --outputjson`."""
    data = _json_after_noise(text)
    if data is None:
        return []
    out: list[Diagnostic] = []
    for item in data.get("generalDiagnostics", []):
        begin = (item.get("range") or {}).get("start") or {}
        out.append(
            Diagnostic(
                file=relative(str(item.get("file", "")), root),
                line=begin["line"] + 1 if "line" in begin else None,
                col=begin["character"] + 1 if "character" in begin else None,
                code=item.get("rule"),
                severity=_severity(item.get("severity", "error")),
                message=str(item.get("message", ""))[:_MESSAGE_CAP],
                source=source,
            )
        )
    return out


# `ty check --output-format concise`: `path:line:col: severity[rule] message`.
_TY_LINE = re.compile(
    r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?P<col>\d+): "
    r"(?P<sev>error|warning|info)\[(?P<code>[\w-]+)\] (?P<msg>.*)$",
    re.MULTILINE,
)


def parse_ty(text: str, root: Path) -> list[Diagnostic]:
    """`ty check --output-format concise`."""
    return _from_lines(_TY_LINE, text, root, "ty", strip=True)


def parse_pyrefly(text: str, root: Path) -> list[Diagnostic]:
    """`pyrefly check --output-format json`."""
    data = _json_after_noise(text)
    out: list[Diagnostic] = []
    for item in data.get("errors", []) if isinstance(data, dict) else []:
        message = str(item.get("concise_description") or item.get("description") or "")
        out.append(
            Diagnostic(
                file=relative(str(item.get("path", "")), root),
                line=item.get("line"),
                col=item.get("column"),
                code=item.get("name"),
                severity=_severity(str(item.get("severity", "error")), warning="warn"),
                message=message[:_MESSAGE_CAP],
                source="pyrefly",
            )
        )
    return out


_E_LINE = re.compile(
    r"^E\s+(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Failed))\b", re.MULTILINE
)
_TB_LOCATION = re.compile(
    r"^(?P<file>[^\s:][^:\n]*\.py):(?P<line>\d+): (?P<what>.*)$", re.MULTILINE
)


# A doctest's failure (a text file's, `--doctest-glob`, or a module's, `--doctest-modules`)
# ends with where its example is: `path:line: DocTestFailure` (or UnexpectedException).
_DOCTEST_AT = re.compile(
    r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+): (?P<what>DocTestFailure|UnexpectedException)\s*\Z",
    re.MULTILINE,
)
_NUMBERED = re.compile(r"^(?P<n>\d+) ?(?P<text>.*)$")


def _block(lines: list[str]) -> str:
    return " ".join(line.strip() for line in lines if line.strip())


def _doctest_message(text: str, line: int) -> str:
    """The failing example as written, and what it expected and got (or what it raised)."""
    lines = text.splitlines()
    example = ""
    for i, raw in enumerate(lines):
        m = _NUMBERED.match(raw)
        if m and int(m["n"]) == line:
            example = m["text"].strip()
            rest = lines[i + 1 :]
            break
    else:
        rest = lines
    if "Expected:" in rest and "Got:" in rest:
        at, got = rest.index("Expected:"), rest.index("Got:")
        end = next((j for j in range(got + 1, len(rest)) if _DOCTEST_AT.match(rest[j])), len(rest))
        said = f"expected: {_block(rest[at + 1 : got])}; got: {_block(rest[got + 1 : end])}"
    else:
        body = [r for r in rest if r.strip() and not _DOCTEST_AT.match(r)]
        said = f"raised {body[-1].strip()}" if body else "failed"
    return f"{example}: {said}" if example else said


def _nodeid(case: ET.Element) -> str:
    return _key(case.get("file") or "", case.get("classname") or "", case.get("name") or "")


def junit_key(nodeid: str, file: str) -> str:
    """The key a failure of pytest's `nodeid` gets from its junit report (`_nodeid`), where
    the test's function is in `file` (its location; a test inherited from a base class in
    another file is reported there). pytest's xunit1 report names it as this does
    (junitxml's `mangle_test_address`): the node id's path dotted without `.py`, its
    classes, and its last name with the parameters."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".").removesuffix(".py")
    names[-1] += bracket + params
    return _key(file, ".".join(names[:-1]), names[-1])


def _key(file: str, classname: str, name: str) -> str:
    if not file:
        return f"{classname}::{name}" if classname else name
    module = file.removesuffix(".py").replace("/", ".")
    klass = classname[len(module) + 1 :] if classname.startswith(module + ".") else ""
    return "::".join(p for p in (file, *klass.split("."), name) if p)


def parse_junit(path: Path, root: Path) -> list[Diagnostic] | None:
    """Failures and errors of a pytest `--junitxml` report (xunit1); None when unreadable."""
    try:
        tree = ET.parse(path)
    except (ET.ParseError, OSError):
        return None
    out: list[Diagnostic] = []
    for case in tree.iter("testcase"):
        for child in case:
            if child.tag not in ("failure", "error"):
                continue
            text = child.text or ""
            doctest_at = _DOCTEST_AT.search(text)
            if doctest_at is not None:
                at_line = int(doctest_at["line"])
                out.append(
                    Diagnostic(
                        file=relative(doctest_at["file"], root),
                        line=at_line,
                        col=None,
                        code=doctest_at["what"],
                        severity="error",
                        message=f"{_nodeid(case)}: {_doctest_message(text, at_line)}"[
                            :_MESSAGE_CAP
                        ],
                        source="pytest",
                    )
                )
                continue
            where = list(_TB_LOCATION.finditer(text))
            # The deepest frame in the project names the failure, not a library's inside.
            own = [m for m in where if in_project(relative(m["file"], root))]
            last = own[-1] if own else where[-1] if where else None
            file = relative(last["file"], root) if last else case.get("file")
            line = int(last["line"]) if last else _int(case.get("line"))
            message = child.get("message") or (text.strip().splitlines() or [""])[-1]
            if message == "collection failure":
                # pytest's message says only that: say what was raised, and where.
                at = f" (raised at {file}:{line})" if last else ""
                said = f"{case.get('file') or _nodeid(case)}: collection error: "
                error = raised(text)
                message = said + (in_root_terms(error, root) if error else "see the output") + at
            else:
                # Raised in a helper: the test's own line too, where its call is.
                mine = [m for m in where if m["file"] == case.get("file")]
                call = f" ({mine[-1]['file']}:{mine[-1]['line']})" if mine and last else ""
                if call and (last is None or last["file"] == mine[-1]["file"]):
                    call = ""
                message = f"{_nodeid(case)}{call}: {message}"
            out.append(
                Diagnostic(
                    file=file,
                    line=line,
                    col=None,
                    code=_failure_code(text, last["what"] if last else "", child.tag),
                    severity="error",
                    message=message[:_MESSAGE_CAP],
                    source="pytest",
                )
            )
    return out


@dataclass(frozen=True)
class JunitCounts:
    """How many tests a pytest run passed, failed (an error included) and skipped."""

    passed: int
    failed: int
    skipped: int

    @property
    def note(self) -> str:
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"


def junit_counts(path: Path) -> JunitCounts | None:
    """The counts of a pytest `--junitxml` report; None when unreadable. An xfail ran (it is
    `<skipped type="pytest.xfail">` there): it counts as passed, as it did check something."""
    try:
        tree = ET.parse(path)
    except (ET.ParseError, OSError):
        return None
    passed = failed = skipped = 0
    for case in tree.iter("testcase"):
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            failed += 1
        elif any(c.tag == "skipped" and c.get("type") != "pytest.xfail" for c in case):
            skipped += 1
        else:
            passed += 1
    return JunitCounts(passed, failed, skipped)


def _failure_code(text: str, what: str, tag: str) -> str:
    # `path:line: AssertionError` names the type; `path:line: in func` does not.
    if what and not what.startswith("in "):
        return what.split()[0]
    raised = _E_LINE.findall(text)
    return str(raised[-1]) if raised else tag


def _int(value: str | None) -> int | None:
    # JUnit's `line` is 0-based in pytest's xunit1 output.
    return int(value) + 1 if value and value.isdigit() else None


_SUMMARY = re.compile(r"^(?P<kind>FAILED|ERROR) (?P<node>\S+)(?: - (?P<msg>.*))?$", re.MULTILINE)


def parse_pytest_summary(text: str) -> list[Diagnostic]:
    """The `FAILED node - message` lines of pytest's short summary (fallback without JUnit)."""
    out: list[Diagnostic] = []
    for m in _SUMMARY.finditer(text):
        node = m["node"]
        out.append(
            Diagnostic(
                file=node.split("::", 1)[0],
                code=m["kind"].lower(),
                message=f"{node}: {m['msg'] or m['kind'].lower()}"[:_MESSAGE_CAP],
                source="pytest",
            )
        )
    return out


_COMPILE_FILE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_COMPILE_ERROR = re.compile(r"^(?P<code>\w+Error): (?P<msg>.*)$", re.MULTILINE)


def parse_compileall(text: str, root: Path) -> list[Diagnostic]:
    """`python -m compileall -q`: one `*** Error compiling` block per broken file."""
    out: list[Diagnostic] = []
    for block in text.split("*** ")[1:]:
        loc = _COMPILE_FILE.search(block)
        err = _COMPILE_ERROR.search(block)
        if loc is None and err is None:
            continue
        out.append(
            Diagnostic(
                file=relative(loc["file"], root) if loc else None,
                line=int(loc["line"]) if loc else None,
                code=err["code"] if err else "compile",
                message=(err["msg"] if err else block.strip().splitlines()[0])[:_MESSAGE_CAP],
                source="compileall",
            )
        )
    return out


_GENERIC = re.compile(
    r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+)(?::(?P<col>\d+))?:\s*"
    r"(?:(?P<sev>error|warning|note|info)(?:\[(?P<code>[^\]]+)\])?:\s*)?(?P<msg>\S.*)$",
    re.MULTILINE,
)


def parse_generic(text: str, root: Path, source: str = "configured") -> list[Diagnostic]:
    """`file:line[:col]: [severity[code]:] message` lines whose file exists in the project."""
    out: list[Diagnostic] = []
    for m in _GENERIC.finditer(text):
        rel = relative(m["file"], root)
        if not (root / rel).is_file():
            continue
        sev = m["sev"]
        severity: Severity = (
            "warning" if sev == "warning" else "note" if sev in ("note", "info") else "error"
        )
        out.append(
            Diagnostic(
                file=rel,
                line=int(m["line"]),
                col=int(m["col"]) if m["col"] else None,
                code=m["code"],
                severity=severity,
                message=m["msg"][:_MESSAGE_CAP],
                source=source,
            )
        )
    return out
