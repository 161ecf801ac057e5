"""Which touched `.rs` files changed only inside their `#[cfg(test)] mod NAME { … }` blocks.

Code under `cfg(test)` exists only in its own crate's unit-test harness (`cargo test --lib`,
`--bins`): the crate's library as its integration tests, doc tests, examples and the crates
that depend on it link it is compiled without `cfg(test)`. So a change that stays inside
those blocks can change the results of that crate's unit tests and of nothing else.

Only the plain form counts: an attribute line that is exactly `#[cfg(test)]`, then (other
attributes, blank lines or comments between) a line `[pub[(…)]] mod NAME {`. Its closing
brace is found by reading Rust's tokens (comments, nested block comments, strings, raw
strings, byte strings, char literals and lifetimes); anything this reader is not sure of —
an unclosed brace or string, a `cfg(any(test, …))`, a module in a file of its own, a file
HEAD did not have — is not test code, so the caller tests as for any other change. A change
that moves code below it (lines added or removed above it) moves that code's `line!()` and
panic locations: test code only when nothing but test blocks follows."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

__all__ = ["cfg_test_blocks", "only_test_code"]

_CFG_TEST = re.compile(r"^\s*#\[\s*cfg\s*\(\s*test\s*\)\s*\]\s*$")
_MOD_OPEN = re.compile(r"^\s*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+[A-Za-z_][A-Za-z0-9_]*\s*\{\s*$")
_BETWEEN = re.compile(r"^\s*(?:#\[.*\]\s*|//.*)?$")
_RAW = re.compile(r'b?r(#*)"')
_CHAR = re.compile(r"'(?:[^'\\\n]|\\(?:[nrt0\\'\"]|x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}))'")


def _skip(text: str, i: int) -> int | None:
    """The offset past the comment, string or char literal at `i` (`i` itself when none
    starts there), or None when it never ends."""
    c, n = text[i], len(text)
    if text.startswith("//", i):
        end = text.find("\n", i)
        return n if end < 0 else end
    if text.startswith("/*", i):
        nested, i = 1, i + 2
        while i < n and nested:
            step = 2 if text.startswith(("/*", "*/"), i) else 1
            nested += 1 if text.startswith("/*", i) else -1 if text.startswith("*/", i) else 0
            i += step
        return None if nested else i
    if c in "rb" and (raw := _RAW.match(text, i)) and not _ident_before(text, i):
        end = text.find('"' + raw[1], raw.end())
        return None if end < 0 else end + 1 + len(raw[1])
    if c == '"':
        i += 1
        while i < n and text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        return None if i >= n else i + 1
    if c == "'":
        char = _CHAR.match(text, i)
        return char.end() if char else i + 1  # a lifetime or a label: `'a`
    return i


def _close(text: str, start: int) -> int | None:
    """The offset of the `}` that closes the `{` at `start`, or None when unsure."""
    depth, i = 0, start
    while i < len(text):
        past = _skip(text, i)
        if past is None:
            return None
        if past != i:
            i = past
            continue
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _ident_before(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


def cfg_test_blocks(lines: Sequence[str]) -> list[tuple[int, int]] | None:
    """The `#[cfg(test)] mod NAME {` blocks as (line of the `{`, line of its `}`), 0-based;
    None when one of them cannot be read for sure."""
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    text = "\n".join(lines)
    blocks: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if not _CFG_TEST.match(lines[i]):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not _MOD_OPEN.match(lines[j]) and _BETWEEN.match(lines[j]):
            j += 1
        if j == len(lines) or not _MOD_OPEN.match(lines[j]):
            i = j  # `#[cfg(test)]` on something else: not a block this reads
            continue
        close = _close(text, offsets[j] + lines[j].rindex("{"))
        if close is None:
            return None
        end = next(k for k in range(j, len(lines)) if offsets[k + 1] > close)
        if lines[end].strip() != "}":
            return None  # code after the closing brace on its line
        blocks.append((j, end))
        i = end + 1
    return blocks


def _inside(blocks: list[tuple[int, int]], first: int, last: int) -> bool:
    """Lines first..last (inclusive) all strictly between one block's braces."""
    return any(open_ < first and last < close for open_, close in blocks)


def _nothing_but_tests_after(lines: Sequence[str], blocks: list[tuple[int, int]], at: int) -> bool:
    """From line `at` on, only test blocks, their attributes, blank lines and comments."""
    return all(
        any(o <= k <= c for o, c in blocks) or _BETWEEN.match(lines[k])
        for k in range(at, len(lines))
    )


def only_test_code(now: Sequence[str], before: Sequence[str] | None) -> bool:
    """Every line that differs between HEAD's text (`before`) and now lies inside a
    `#[cfg(test)] mod` block, on both sides."""
    if before is None:
        return False
    old, new = cfg_test_blocks(before), cfg_test_blocks(now)
    if old is None or new is None:
        return False
    matcher = difflib.SequenceMatcher(a=list(before), b=list(now), autojunk=False)
    changed = False
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        changed = True
        if i2 - i1 != j2 - j1 and not _nothing_but_tests_after(now, new, j2):
            return False  # code below moves: its line!() and panic locations change
        # Removed lines sit inside a block of HEAD's text, added ones inside one of the
        # new text; a pure insertion or removal also sits between two lines of one block.
        if i2 > i1 and not _inside(old, i1, i2 - 1):
            return False
        if j2 > j1 and not _inside(new, j1, j2 - 1):
            return False
        if i1 == i2 and not any(o <= i1 - 1 and i1 <= c for o, c in old):
            return False
        if j1 == j2 and not any(o <= j1 - 1 and j1 <= c for o, c in new):
            return False
    return changed
