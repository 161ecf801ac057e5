"""TAP, the console report of tape, tap, node-tap and their kin, read for the failed tests.

A test script whose runner has no report we parse otherwise (no vitest, jest or node test
runner) usually prints TAP: `not ok N description`, then an indented YAML block whose `at:`
names the assertion's frame and whose `expected:` / `actual:` say what differed. The
nearest `# name` comment before it is the test's name (tape prints one per test).
"""

from __future__ import annotations

import re
from pathlib import Path

from ...models import Diagnostic
from ...tracebacks import relative

__all__ = ["parse_tap", "parse_tap_keyed", "tap_passed"]

_CAP = 2000
_NOT_OK = re.compile(r"^\s*not ok\s+\d+\s*(?:-\s*)?(?P<desc>.*?)\s*$")
_DIRECTIVE = re.compile(r"#\s*(?:TODO|SKIP)\b", re.IGNORECASE)
_COMMENT = re.compile(r"^#\s+(?P<name>.+?)\s*$")
_KEY = re.compile(r"^(?P<indent>\s+)(?P<key>[A-Za-z_]+):\s?(?P<value>.*)$")
_FRAME = re.compile(r"(?:file://)?(?P<path>[^\s()]+?):(?P<line>\d+):(?P<col>\d+)\)?\s*$")
_SUMMARY = re.compile(r"^(tests|pass|fail|ok|todo|skip)\b", re.IGNORECASE)


_PASSED = re.compile(r"^#\s+pass\s+(\d+)\s*$", re.MULTILINE)


def tap_passed(text: str) -> int | None:
    """What TAP's closing summary counts as passed (tape's `# pass N`, summed when a script
    printed several), or None when it printed no such summary."""
    found = _PASSED.findall(text)
    return sum(int(n) for n in found) if found else None


def _block(lines: list[str], start: int) -> tuple[dict[str, str], int]:
    """The YAML block after a `not ok` line (from its `---` to its `...`): the top-level
    keys, a `|` / `|-` value as its indented lines joined; and the index after it."""
    if start >= len(lines) or lines[start].strip() != "---":
        return {}, start
    keys: dict[str, str] = {}
    index, current, indent = start + 1, "", 0
    while index < len(lines) and lines[index].strip() != "...":
        line = lines[index]
        m = _KEY.match(line)
        if m is not None and (not current or len(m["indent"]) <= indent):
            current, indent = m["key"], len(m["indent"])
            value = m["value"].strip()
            keys[current] = "" if value in ("|", "|-", ">", ">-") else value
        elif current and line.strip():
            keys[current] = f"{keys[current]} {line.strip()}".strip()
        index += 1
    return keys, index + 1


def parse_tap(text: str, root: Path, source: str) -> list[Diagnostic]:
    """A finding per `not ok` line that is not a TODO or SKIP: located at its `at:` frame
    when that lies in the project (outside node_modules), named by the test's `# name`."""
    return [diag for diag, _ in parse_tap_keyed(text, root, source)]


def parse_tap_keyed(text: str, root: Path, source: str) -> list[tuple[Diagnostic, str]]:
    """`parse_tap`'s findings, each with its key: the test's `# name` and the line's
    description (`name: description`), without the line's number or the expected and actual
    values, which move with the change."""
    out: list[tuple[Diagnostic, str]] = []
    name = ""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        comment = _COMMENT.match(line)
        if comment is not None and not _SUMMARY.match(comment["name"]):
            name = comment["name"]
        m = _NOT_OK.match(line)
        index += 1
        if m is None or _DIRECTIVE.search(m["desc"]):
            continue
        keys, index = _block(lines, index)
        file, line_no = None, None
        frame = _FRAME.search(keys.get("at", ""))
        if frame is not None:
            rel = relative(frame["path"], root)
            if not rel.startswith("/") and "node_modules" not in rel:
                file, line_no = rel, int(frame["line"])
        said = m["desc"] or "failed"
        key = f"{name}: {said}" if name else said
        if "expected" in keys or "actual" in keys:
            said += f": expected {keys.get('expected', '?')}, actual {keys.get('actual', '?')}"
        diag = Diagnostic(
            file=file,
            line=line_no,
            code="not ok",
            message=(f"{name}: {said}" if name else said)[:_CAP],
            source=source,
        )
        out.append((diag, key))
    return out
