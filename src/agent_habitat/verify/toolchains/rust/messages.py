"""cargo's output as findings: the compiler's JSON messages (`--message-format=json`, one
object a line), a build script that failed (cargo's plain "failed to run custom build
command", a build failure at the script's panic or file, with what it wrote), and libtest's
plain report of failed tests, doc tests and test binaries that did not exit cleanly (killed
by a signal: the rung is `died`)."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...models import Diagnostic, Severity
from ...tracebacks import relative

__all__ = [
    "BUILD_SCRIPT",
    "FORMAT",
    "LibtestReport",
    "build_script_failures",
    "compiler_messages",
    "failed_so_far",
    "libtest_report",
]

FORMAT = "3"
"""The version of the findings `compiler_messages` makes (a type mismatch's message carries
its expected and found types since 2; a failed build script is a finding since 3): part of
the key HEAD's cached findings are kept under, so findings of an older format are never
compared with this one's."""
BUILD_SCRIPT = "build script"
"""The code of a build script's failure (`build_script_failures`)."""
_LEVELS: dict[str, Severity] = {"error": "error", "warning": "warning"}
# Summaries the compiler adds after the findings themselves.
_SUMMARY = re.compile(r"^(aborting due to|\d+ warnings? emitted|could not compile)")
_FAILED_TEST = re.compile(r"^---- (?P<name>.+?) stdout ----$")
# A failed test's own line: harnesses that print no `---- NAME stdout ----` section (the
# `tester` crate, libtest's panics written straight to stderr) name it only there.
_FAILED_LINE = re.compile(r"^test (?P<name>.+) \.\.\. FAILED$")
# cargo's word on a test binary that exited 101 (libtest's failure code): a harness = false
# target that panicked says nothing else (no "process didn't exit successfully").
_RERUN = re.compile(r"error: test failed, to rerun pass `(?P<args>[^`]*)`")
# cargo's word after any target that failed (a doc test's too): the arguments that select it.
_RERUN_ANY = re.compile(r"error: (?:doc)?test failed, to rerun pass `(?P<args>[^`]*)`")
_THREAD_PANIC = re.compile(r"^thread '(?P<name>.+)' (?:\(\d+\) )?panicked at (?P<where>.+)$")
_DOC_TEST = re.compile(r"^(?P<file>\S+\.rs) - .*\(line (?P<line>\d+)\)$")
_PANIC = re.compile(r"panicked at (?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+):$")
_BINARY = re.compile(
    r"process didn't exit successfully: `(?P<argv>[^`]*)` \((?:exit status: (?P<code>\d+)"
    r"|signal: (?P<signum>\d+), (?P<signal>SIG[A-Z0-9]+)[^)]*)\)"
)
_CUSTOM_BUILD = re.compile(
    r"^error: failed to run custom build command for `(?P<package>[^`(]+?)"
    r"(?: \((?P<path>[^`]*)\))?`"
)
_RUNNING = re.compile(
    r"^\s+(?:Running (?:unittests )?(?P<src>\S+) \((?P<binary>[^)]*)\)|Doc-tests (?P<doc>\S+))"
)


def _cargo_json(text: str) -> Iterable[dict[str, Any]]:
    for line in text.splitlines():
        if not line.startswith('{"reason":'):
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict):
            yield item


def compiler_messages(text: str, root: Path, *, tool: str) -> list[Diagnostic]:
    """Errors and warnings of `cargo check/clippy/build/test --message-format=json`, at
    their primary span, once each (a lib compiled twice, plain and as tests, reports twice);
    a warning that the test build denies (`#![cfg_attr(test, deny(warnings))]`) is there
    twice, a warning and an error.
    Relative paths in the messages are the workspace root's, which is `root`."""
    seen: set[tuple[object, ...]] = set()
    out: list[Diagnostic] = []
    for item in _cargo_json(text):
        if item.get("reason") != "compiler-message":
            continue
        message = item.get("message") or {}
        level = str(message.get("level", ""))
        severity = _LEVELS.get(level.split(":")[0])
        text_ = str(message.get("message", ""))
        if severity is None or _SUMMARY.match(text_):
            continue
        spans = message.get("spans") or []
        span = next((s for s in spans if s.get("is_primary")), spans[0] if spans else None)
        text_ += _expected_found(message, span)
        code = (message.get("code") or {}).get("code")
        file = relative(str(span["file_name"]), root) if span else None
        diag = Diagnostic(
            file=file,
            line=span.get("line_start") if span else None,
            col=span.get("column_start") if span else None,
            code=str(code) if code else level,
            severity=severity,
            message=text_,
            source=tool,
        )
        key = (diag.file, diag.line, diag.col, diag.code, diag.severity, diag.message)
        if key not in seen:
            seen.add(key)
            out.append(diag)
    for diag in build_script_failures(text, root, tool=tool):
        key = (diag.file, diag.line, diag.col, diag.code, diag.severity, diag.message)
        if key not in seen:
            seen.add(key)
            out.append(diag)
    return out


def _build_scripts(text: str) -> dict[str, str]:
    """Each package folder's build script (its `custom-build` target's source file), from
    cargo's JSON artifacts: a manifest may name it (`build = "src/build.rs"`)."""
    out: dict[str, str] = {}
    for item in _cargo_json(text):
        target = item.get("target") or {}
        manifest = item.get("manifest_path")
        if "custom-build" in (target.get("kind") or []) and isinstance(manifest, str):
            out[posixpath.dirname(manifest)] = str(target.get("src_path", ""))
    return out


def build_script_failures(text: str, root: Path, *, tool: str) -> list[Diagnostic]:
    """A finding for each build script cargo ran that failed: at its panic when it panicked
    in the project's code, else at the script's file (no line), with its exit status and
    the first lines it wrote to stderr (its panic message), its package named without the
    folder (HEAD's export lies elsewhere)."""
    lines = text.splitlines()
    scripts: dict[str, str] | None = None
    out: list[Diagnostic] = []
    for i, line in enumerate(lines):
        if (failed := _CUSTOM_BUILD.match(line)) is None:
            continue
        status, panic, said = _script_said(lines[i + 1 :])
        if scripts is None:
            scripts = _build_scripts(text)
        folder = failed["path"]
        script = scripts.get(folder or "") or (posixpath.join(folder, "build.rs") if folder else "")
        file: str | None = relative(script, root) if script else None
        at_line: int | None = None
        if panic is not None and not Path(panic[0]).is_absolute():
            file, at_line = relative(panic[0], root), panic[1]
        if file is not None and Path(file).is_absolute():
            file = None  # a registry dependency's script: no file of the project
        detail = "; ".join(said[:4])[:500]
        out.append(
            Diagnostic(
                file=file,
                line=at_line,
                code=BUILD_SCRIPT,
                severity="error",
                message=f"build script of `{failed['package']}` failed ({status})"
                + (f": {detail}" if detail else ""),
                source=tool,
            )
        )
    return out


def _without_failed_scripts(lines: list[str]) -> list[str]:
    """`lines` without cargo's messages on failed build scripts: their "process didn't exit
    successfully" is a build script's, not a test binary's (`build_script_failures`)."""
    out: list[str] = []
    inside = False
    for line in lines:
        if _CUSTOM_BUILD.match(line) is not None:
            inside = True
        elif inside and not _within_failed_script(line):
            inside = False
        if not inside:
            out.append(line)
    return out


def _within_failed_script(line: str) -> bool:
    """A line of cargo's message on a failed build script after its first: its note, its
    "Caused by:" and that section's indented lines (not cargo's next message, nor JSON)."""
    return not line or line.startswith((" ", "Caused by:", "note: "))


def _script_said(after: list[str]) -> tuple[str, tuple[str, int] | None, list[str]]:
    """From the lines after cargo's "failed to run custom build command": the script's exit
    status, its panic's place (file, line), and what it wrote to stderr (the panic's message
    for a panic), stopping at a backtrace or the end of cargo's indented "Caused by"."""
    status, section = "failed", ""
    panic: tuple[str, int] | None = None
    said: list[str] = []
    for line in after:
        if not _within_failed_script(line):
            break
        text = line.strip()
        if (binary := _BINARY.search(text)) is not None:
            status = f"exit {binary['code']}" if binary["code"] else str(binary["signal"])
        elif text in ("--- stdout", "--- stderr"):
            section = text
        elif section == "--- stderr" and text:
            if text.startswith(("stack backtrace:", "note: ")):
                break
            if (where := _THREAD_PANIC.match(text)) is not None:
                at = _PANIC.search(f"panicked at {where['where']}")
                if at is not None:
                    panic = (at["file"], int(at["line"]))
                said.clear()  # what it wrote before its panic is not the panic's message
                continue
            said.append(text)
    return status, panic, said


def _expected_found(message: dict[str, Any], span: dict[str, Any] | None) -> str:
    """What rustc shows under a type mismatch (E0308, E0053, incompatible `match` arms):
    the primary span's label, `: expected `u32`, found `&str``; "" for any other label."""
    label = str((span or {}).get("label") or "")
    if label.startswith("expected ") and label not in str(message.get("message", "")):
        return f": {label}"
    return ""


@dataclass
class LibtestReport:
    failures: list[Diagnostic] = field(default_factory=list)
    """One per failed test, doc test, or test binary that exited without a report."""
    signal: str | None = None
    """A test binary was killed by this signal (`SIGSEGV`, `SIGABRT` …)."""
    died: str | None = None
    """Which test binary died, as cargo names it."""
    passed: int = 0
    failed: int = 0
    reruns: dict[str, str] = field(default_factory=dict)
    """A failed test's name (libtest's `test NAME ... FAILED`) → the arguments cargo said
    select its target (`-p strsim --doc`, `--lib`, `--test api`)."""
    ran_binaries: int = 0


CrateDir = Callable[[str], str | None]
"""A test binary's stem (`app-0de6…` → `app`) or a doc-tested crate's name → the crate's
folder relative to the project root: cargo names a target's file relative to its crate."""


def _in_crate(crate_dir: CrateDir | None, name: str, rel: str) -> str:
    folder = crate_dir(name) if crate_dir is not None else None
    return rel if folder in (None, ".") else posixpath.join(folder, rel)


def _failure(name: str, body: list[str], root: Path, target: str | None, folder: str) -> Diagnostic:
    where = next((m for ln in body if (m := _PANIC.search(ln.strip()))), None)
    doc = _DOC_TEST.match(name)
    # A doc test's own panic: rustdoc names its source file with the line in the snippet as
    # compiled (humantime 2.2.0: "src/duration.rs:9:1" for line 222), so the line is the doc
    # test's; the file is the panic's, which is the workspace root's already (a member's
    # doc test is named `helper/src/lib.rs - …`, not relative to its crate).
    own_panic = where is not None and doc is not None and where["file"] == doc["file"]
    file: str | None = None
    line: int | None = None
    if where is not None and not Path(where["file"]).is_absolute():
        file, line = relative(where["file"], root), int(where["line"])
        if own_panic and doc is not None:
            line = int(doc["line"])
    elif doc is not None:
        file = posixpath.normpath(posixpath.join(folder, doc["file"]))
        line = int(doc["line"])
    else:
        file = target
    said: list[str] = []
    for ln in body:
        if ln.startswith(("stack backtrace:", "note: ")):
            break
        if ln.strip() and "panicked at" not in ln:
            said.append(ln.strip())
    detail = "; ".join(said[:4])[:500]
    return Diagnostic(
        file=file,
        line=line,
        code="test failed",
        message=f"{name}: {detail}" if detail else f"{name} failed",
        source="cargo test",
    )


def libtest_report(text: str, root: Path, crate_dir: CrateDir | None = None) -> LibtestReport:
    """What libtest and cargo said about the test run (the plain lines of the output).
    Panic locations are the workspace root's already; a target's own file is made the
    project's through `crate_dir`."""
    report = LibtestReport()
    lines = _without_failed_scripts(text.splitlines())
    target: str | None = None
    folder = "."
    first_of_binary = 0  # the index of the current binary's first failure
    said_failed = 0  # the current binary's `test NAME ... FAILED` lines
    pending: tuple[str | None, str, list[str]] | None = None  # a failed binary, unexplained
    unexplained: list[tuple[str, str | None, str]] = []  # FAILED lines: name, target, folder
    panics: dict[str, list[str]] = {}  # a test thread's panic: its lines
    i = 0
    while i < len(lines):
        line = lines[i]
        if (failed_line := _FAILED_LINE.match(line)) is not None:
            unexplained.append((failed_line["name"], target, folder))
            said_failed += 1
        elif (panic := _THREAD_PANIC.match(line)) is not None:
            panics[panic["name"]] = [f"panicked at {panic['where']}", *lines[i + 1 : i + 5]]
        if (running := _RUNNING.match(line)) is not None:
            _exited_101(report, pending, root)
            pending = None
            if running["doc"]:
                name = running["doc"]
                folder = (crate_dir(name) if crate_dir else None) or "."
                target = f"doc tests of {name}"
            else:
                stem = running["binary"].rsplit("/", 1)[-1].rsplit("-", 1)[0]
                folder = (crate_dir(stem) if crate_dir else None) or "."
                target = _in_crate(crate_dir, stem, running["src"])
            report.ran_binaries += 1
            first_of_binary, said_failed = len(report.failures), 0
        elif (failed := _FAILED_TEST.match(line)) is not None:
            body: list[str] = []
            i += 1
            while i < len(lines) and not _FAILED_TEST.match(lines[i]) and lines[i] != "failures:":
                body.append(lines[i])
                i += 1
            report.failures.append(_failure(failed["name"], body, root, target, folder))
            continue
        elif line.startswith("test result: "):
            _count(report, line)
        elif _RERUN.search(line) and len(report.failures) == first_of_binary and not said_failed:
            # Failed with nothing said yet: unless cargo's "Caused by" follows, the binary
            # exited 101 (a panic in a harness = false target's main), said when it ends.
            pending = (target, folder, panics.get("main", []))
        elif (binary := _BINARY.search(line)) is not None:
            pending = None
            program = binary["argv"].split(" ")[0].rsplit("/", 1)[-1]
            if binary["signal"]:
                report.signal, report.died = binary["signal"], target or program
                report.failures.append(
                    Diagnostic(
                        file=target,
                        code=binary["signal"],
                        message=f"test binary {program} ({target}) killed by {binary['signal']}",
                        source="cargo test",
                    )
                )
            elif len(report.failures) == first_of_binary and not said_failed:  # nor a test
                report.failures.append(
                    Diagnostic(
                        file=target,
                        code=f"exit {binary['code']}",
                        message=f"test binary {program} ({target}) exited {binary['code']}",
                        source="cargo test",
                    )
                )
        i += 1
    _exited_101(report, pending, root)
    _add_unexplained(report, unexplained, panics, root)
    report.reruns = _reruns(lines)
    return report


def _reruns(lines: list[str]) -> dict[str, str]:
    """Each failed test's name → the arguments of the `to rerun pass` line cargo wrote
    after its binary."""
    out: dict[str, str] = {}
    section: list[str] = []  # the current binary's failed tests
    for line in lines:
        if _RUNNING.match(line) is not None:
            section = []
        elif (failed := _FAILED_LINE.match(line)) is not None:
            section.append(failed["name"])
        elif (rerun := _RERUN_ANY.search(line)) is not None:
            for name in section:
                out.setdefault(name, rerun["args"])
            section = []
    return out


def failed_so_far(text: str, doc_args: Callable[[str], str | None]) -> dict[str, str]:
    """The failed tests a run's output names so far (it may still be running), each with the
    arguments that select its target: cargo's `to rerun pass` once its target ended, else,
    for the doc tests under way, `doc_args` of the doc-tested crate's name (None: not known
    yet). A failed test of a test binary under way is left for its target's end."""
    out: dict[str, str] = {}
    section: list[str] = []
    args: str | None = None
    for line in text.splitlines():
        if (running := _RUNNING.match(line)) is not None:
            section = []
            args = doc_args(running["doc"]) if running["doc"] else None
        elif (failed := _FAILED_LINE.match(line)) is not None:
            section.append(failed["name"])
        elif (rerun := _RERUN_ANY.search(line)) is not None:
            out.update({name: rerun["args"] for name in section if name not in out})
            section, args = [], None
    if args is not None:
        out.update({name: args for name in section if name not in out})
    return out


def _count(report: LibtestReport, line: str) -> None:
    for count, what in re.findall(r"(\d+) (passed|failed)", line):
        if what == "passed":
            report.passed += int(count)
        else:
            report.failed += int(count)


def _exited_101(
    report: LibtestReport, pending: tuple[str | None, str, list[str]] | None, root: Path
) -> None:
    if pending is not None:
        target, folder, panic = pending
        name = f"test binary of {target} exited 101"
        report.failures.append(_failure(name, panic, root, target, folder))


def _add_unexplained(
    report: LibtestReport,
    failed: list[tuple[str, str | None, str]],
    panics: dict[str, list[str]],
    root: Path,
) -> None:
    """A failure for each `test NAME ... FAILED` no `---- NAME stdout ----` section
    explained, at its thread's panic when the output has it."""
    explained = {d.message.split(": ")[0] for d in report.failures}
    explained |= {d.message[: -len(" failed")] for d in report.failures}
    for name, target, folder in failed:
        if name not in explained:
            explained.add(name)
            report.failures.append(_failure(name, panics.get(name, []), root, target, folder))
