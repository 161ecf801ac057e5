"""Go tools' output as `Diagnostic`s: `go build`/`go vet`/`gofmt` error lines
(`file:line:col: message`), `go vet -json` reports, `gofmt -d` diffs (a finding per run of
changed lines) and the event stream of `go test -json` (failed tests, build failures,
panics and signals)."""

from __future__ import annotations

import json
import re
import signal
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...models import Diagnostic
from ...tracebacks import relative

__all__ = [
    "TestRun",
    "code_names_a_kind",
    "json_objects",
    "parse_build",
    "parse_gofmt_diff",
    "parse_test_events",
    "parse_vet",
    "visible",
]

_MESSAGE_CAP = 2000
# `a/b.go:3:14: undefined: x` (go build, gofmt), `vet: a/b.go:3:14: …` (go vet's type check).
_ERROR_LINE = re.compile(
    r"^(?:vet: )?(?P<file>[^\s:][^:]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$"
)
# Where a test's own message points: `    a_test.go:7: got 3` (relative to the package folder).
_TEST_LINE = re.compile(r"^\s+(?P<file>[\w.\-]+\.go):(?P<line>\d+): ")
_SIGNAL_LINE = re.compile(r"^signal: (?P<name>[a-z ]+)$")
_PANIC_SIGNAL = re.compile(r"\[signal (?P<name>SIG[A-Z]+)")
# Go prints a signal by its description (`signal: killed`); Python knows the same words.
_SIGNALS = {
    (signal.strsignal(s) or "").lower(): s.name for s in signal.Signals if signal.strsignal(s)
}
# Control characters other than newline and tab, which Go's tools print raw where a message
# quotes the source (go vet: `format %\b has unknown verb \b` carries a real backspace, which
# erases the character before it in a terminal and reaches the agent as a raw byte).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\v": "\\v", "\r": "\\r"}


def visible(text: str) -> str:
    """`text` with each control character (newline and tab kept) written as Go writes it in
    source: `\\b`, `\\x1b`, so a message reads as the line it quotes."""
    return _CONTROL.sub(lambda m: _GO_ESCAPES.get(m[0]) or f"\\x{ord(m[0]):02x}", text)


def _rel(path: str, base: Path, root: Path) -> str:
    """A Go tool's path (relative to `base`, the folder it ran in, or absolute) relative to
    `root`."""
    p = Path(path)
    return relative(str(p if p.is_absolute() else base / p), root)


def parse_build(
    text: str, root: Path, *, cwd: Path | None = None, source: str = "go build"
) -> list[Diagnostic]:
    """Compiler errors: `file:line:col: message` lines (paths relative to `cwd`, default the
    root); `# package` headers and the rest are left out."""
    base = cwd or root
    out: list[Diagnostic] = []
    seen: set[tuple[str, int, str]] = set()
    for line in text.split("\n"):  # not splitlines: a form feed in a message is no line end
        m = _ERROR_LINE.match(line.rstrip())
        if m is None:
            continue
        rel = _rel(m["file"], base, root)
        key = (rel, int(m["line"]), m["msg"])
        if key in seen:  # the same error from the package and its test variant
            continue
        seen.add(key)
        out.append(
            Diagnostic(
                file=rel,
                line=int(m["line"]),
                col=int(m["col"]) if m["col"] else None,
                code="typecheck" if line.startswith("vet: ") else "compile",
                message=visible(m["msg"])[:_MESSAGE_CAP],
                source=source,
            )
        )
    return out


_NO_KIND = frozenset({"compile", "typecheck", "syntax"})


def code_names_a_kind(diag: Diagnostic) -> bool:
    """Whether a finding's code says what kind of problem it is (a vet analyzer, `gofmt`),
    so that HEAD's finding of that code on the line it replaced is the same one. Go's
    compiler, type checker and parser give no code (`compile`, `typecheck`, `syntax` here):
    another error on HEAD's broken line is a different error (`mark_preexisting`)."""
    return diag.code not in _NO_KIND


def json_objects(text: str) -> list[Any]:
    """The JSON values in `text` that start a line (`go vet -json` mixes them with `# pkg`)."""
    decoder = json.JSONDecoder()
    out: list[Any] = []
    pos = 0
    while (start := text.find("{", pos)) != -1:
        if start > 0 and text[start - 1] != "\n":
            pos = start + 1
            continue
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            pos = start + 1
            continue
        out.append(value)
        pos = end
    return out


def _posn(posn: str) -> tuple[str, int | None, int | None]:
    parts = posn.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return parts[0], int(parts[1]), int(parts[2])
    if len(parts) >= 2 and parts[-1].isdigit():
        return posn.rsplit(":", 1)[0], int(parts[-1]), None
    return posn, None, None


def parse_vet(text: str, root: Path) -> list[Diagnostic]:
    """`go vet -json`: `{package: {analyzer: [{posn, message}]}}` per package, plus the
    type errors (`vet: file:line:col: msg`) of a package that does not compile."""
    out = parse_build(text, root, source="go vet")
    for report in json_objects(text):
        if not isinstance(report, dict):
            continue
        for analyzers in report.values():
            if not isinstance(analyzers, dict):
                continue
            for analyzer, found in analyzers.items():
                if not isinstance(found, list):
                    continue  # {"error": …}: a package vet could not analyse
                for item in found:
                    path, line, col = _posn(str(item.get("posn", "")))
                    out.append(
                        Diagnostic(
                            file=relative(path, root) if path else None,
                            line=line,
                            col=col,
                            code=str(analyzer),
                            message=visible(str(item.get("message", "")))[:_MESSAGE_CAP],
                            source="go vet",
                        )
                    )
    return out


_HUNK = re.compile(r"^@@ -(?P<old>\d+)(?:,(?P<olds>\d+))? \+\d+(?:,(?P<news>\d+))? @@")


def _gofmt_finding(rel: str, line: int) -> Diagnostic:
    return Diagnostic(
        file=rel,
        line=line,
        code="gofmt",
        message=f"not formatted as gofmt formats it (gofmt -d shows how; run gofmt -w {rel})",
        source="gofmt",
    )


def _hunk_blocks(lines: list[str], at: int, m: re.Match[str]) -> tuple[list[int], int]:
    """The original line where each run of changed lines of the hunk at `lines[at]` (its
    header matched as `m`) starts (a run that only adds lines: the original line it comes
    before), and where the hunk ends in `lines`."""
    starts: list[int] = []
    olds, news = int(m["olds"] or 1), int(m["news"] or 1)
    old = int(m["old"]) if olds > 0 else int(m["old"]) + 1
    i, in_block = at + 1, False
    while i < len(lines) and (olds > 0 or news > 0):
        kind = lines[i][:1]
        if kind == "\\":  # \ No newline at end of file
            i += 1
            continue
        if kind not in (" ", "-", "+", ""):
            break
        changed = kind in ("-", "+")
        if changed and not in_block:
            starts.append(old)
        in_block = changed
        if kind != "+":
            old, olds = old + 1, olds - 1
        if kind != "-":
            news -= 1
        i += 1
    return starts, i


def parse_gofmt_diff(text: str, root: Path, *, cwd: Path | None = None) -> list[Diagnostic]:
    """`gofmt -d FILES`: one finding per run of changed lines of each hunk, at the first
    line of the original file it changes (the line's text tells a new break from one
    already at HEAD in the same file); a file gofmt cannot parse is a syntax error
    (`file:line:col: msg` on stderr)."""
    base = cwd or root
    syntax: list[Diagnostic] = []
    out: list[Diagnostic] = []
    lines = text.splitlines()
    rel: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("+++ "):
            rel = _rel(line[4:].strip(), base, root)
        elif line.startswith("@@ ") and rel is not None and (m := _HUNK.match(line)):
            starts, i = _hunk_blocks(lines, i, m)
            out.extend(_gofmt_finding(rel, n) for n in starts)
            continue
        elif line.startswith("diff "):
            rel = None
        else:
            syntax.extend(parse_build(line, root, cwd=base, source="gofmt"))
        i += 1
    for d in syntax:
        d.code = "syntax"
    return syntax + out


@dataclass
class TestRun:
    """What a `go test -json` stream says."""

    failures: list[Diagnostic] = field(default_factory=list)
    """Failed tests and packages that failed to build, in the order they were reported."""
    died: tuple[str, str | None] | None = None
    """(the test or package that died, its signal name or None for a panic) when one did."""
    died_how: str = ""
    packages: dict[str, str] = field(default_factory=dict)
    """Package → its final action (`pass`, `fail`, `skip`)."""
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    cached: int = 0
    """Packages whose result came from go's test cache."""
    passed_tests: list[str] = field(default_factory=list)
    """Each test (and subtest) that passed, as `import/path.TestName/sub`."""
    failed_builds: dict[str, list[Diagnostic]] = field(default_factory=dict)
    """The builds whose failure is told (`FailedBuild`: an import path, `pkg [pkg.test]` for
    its tests' build), in the order told, with their errors (among `failures`): go fails
    every package that imports one with the same build, whose errors are told once."""

    def count(self, action: str, name: str) -> None:
        """A test's event: its end (`pass`, `fail`, `skip`) is counted, a pass named."""
        if action == "pass":
            self.passed += 1
            self.passed_tests.append(name)
        elif action == "fail":
            self.failed += 1
        elif action == "skip":
            self.skipped += 1


def _package_dirs(root: Path, dirs: dict[str, Path]) -> dict[str, Path]:
    return {k: v if v.is_absolute() else root / v for k, v in dirs.items()}


def parse_test_events(text: str, root: Path, dirs: dict[str, Path] | None = None) -> TestRun:
    """The event stream of `go test -json`; `dirs` maps an import path to its folder (for a
    test's `file.go:line:` message)."""
    folders = _package_dirs(root, dirs or {})
    run = TestRun()
    outputs: dict[tuple[str, str], list[str]] = {}
    builds: dict[str, list[str]] = {}
    running: dict[str, list[str]] = {}
    """Package → its tests that started and have not ended (a test binary that dies ends
    none of them)."""
    for raw in text.splitlines():
        if not raw.startswith("{"):
            continue
        try:
            event: dict[str, Any] = json.loads(raw)
        except json.JSONDecodeError:
            continue
        action = event.get("Action")
        package = str(event.get("Package") or "")
        test = str(event.get("Test") or "")
        if action == "build-output":
            builds.setdefault(str(event.get("ImportPath", "")), []).append(event.get("Output", ""))
        elif action == "run" and test:
            running.setdefault(package, []).append(test)
        elif action == "output":
            line = str(event.get("Output", ""))
            outputs.setdefault((package, test), []).append(line)
            if line.rstrip().endswith("(cached)") and line.startswith("ok"):
                run.cached += 1
        elif action in ("pass", "fail", "skip") and not test:
            run.packages[package] = action
            for name in running.pop(package, []) if action == "fail" else ():
                # Started, never ended: the binary died (or exited) while it ran.
                lines = outputs.get((package, name), [])
                _test_failed(run, root, package, name, lines, folders.get(package))
            if action == "fail":
                _package_failed(run, root, event, package, outputs, builds, folders)
        elif action in ("pass", "fail", "skip") and test and test in running.get(package, []):
            running[package].remove(test)
        if test:
            run.count(str(action), f"{package}.{test}")
        if action == "fail" and test:
            lines = outputs.get((package, test), [])
            _test_failed(run, root, package, test, lines, folders.get(package))
    return run


def _died_of(lines: list[str]) -> tuple[str | None, str] | None:
    """(signal or None, what it said) when the output shows a panic or a killing signal."""
    for line in lines:
        text = line.strip()
        m = _SIGNAL_LINE.match(text)
        if m:
            return _SIGNALS.get(m["name"], m["name"]), text
        if text.startswith("panic: "):
            sig = _PANIC_SIGNAL.search("".join(lines))
            return (sig["name"] if sig else None), text
    return None


def _test_failed(
    run: TestRun, root: Path, package: str, test: str, lines: list[str], folder: Path | None
) -> None:
    died = _died_of(lines)
    body = [ln.rstrip("\n") for ln in lines if not ln.startswith(("=== ", "--- FAIL", "--- PASS"))]
    message = textwrap.dedent("\n".join(ln for ln in body if ln.strip())).strip()[:_MESSAGE_CAP]
    if (
        not message
        and died is None
        and any(d.message.startswith(f"{package}.{test}/") for d in run.failures)
    ):
        return  # a parent that failed because its subtests did: they say why
    file = line = None
    for ln in body:
        m = _TEST_LINE.match(ln)
        if m:
            file = _rel(m["file"], folder or root, root) if folder else m["file"]
            line = int(m["line"])
            break
    if died is not None and run.died is None:
        run.died, run.died_how = (f"{package}.{test}", died[0]), died[1]
    run.failures.append(
        Diagnostic(
            file=file,
            line=line,
            code=(died[0] or "panic") if died else "FAIL",
            message=visible(f"{package}.{test}: {message or 'failed'}"),
            source="go test",
        )
    )


def _package_failed(
    run: TestRun,
    root: Path,
    event: dict[str, Any],
    package: str,
    outputs: dict[tuple[str, str], list[str]],
    builds: dict[str, list[str]],
    folders: dict[str, Path],
) -> None:
    failed_build = event.get("FailedBuild")
    if failed_build:
        if str(failed_build) in run.failed_builds:
            return  # an importer of a build already told: its errors are that build's
        found = parse_build("".join(builds.get(str(failed_build), [])), root)
        if not found:
            text = "".join(builds.get(str(failed_build), [])).strip()
            found.append(
                Diagnostic(
                    code="build",
                    message=visible(f"{package}: build failed: {text[-500:]}"),
                    source="go test",
                )
            )
        run.failed_builds[str(failed_build)] = found
        run.failures.extend(found)
        return
    lines = outputs.get((package, ""), [])
    died = _died_of(lines)
    if died is not None and run.died is None:
        run.died, run.died_how = (package, died[0]), died[1]
    if any(d.message.startswith(f"{package}.") for d in run.failures):
        return  # its failed tests say why
    text = "".join(ln for ln in lines if not ln.startswith(("FAIL\t", "ok \t"))).strip()
    run.failures.append(
        Diagnostic(
            code=(died[0] or "panic") if died else "FAIL",
            message=visible(f"{package}: {text[-_MESSAGE_CAP:] or 'failed'}"),
            source="go test",
        )
    )
