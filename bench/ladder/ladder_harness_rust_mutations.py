"""Seeded single-line mutations of Rust sources for the Rust ladder harness.

Kinds, as for Python (ladder_harness_mutations.py): comparison flips (`==`/`!=`, `<`/`>=`,
`>`/`<=`), operator flips (`+`/`-`, `*`/`/`, `&&`/`||`), off-by-one integer literals,
`true`/`false` swaps, and removed statements (a one-line `expr;` that is not a `let`,
emptied). Only binary operators written with spaces around them (rustfmt's style) are
flipped, so generics (`Vec<T>`), arrows and shifts are never touched. Lines in comments,
attributes, `use` lines, string literals and everything from a `#[cfg(test)]` block on (a
module's unit tests) are left alone; a `#[cfg(test)]` one-line item (`mod tests;`, `extern
crate log;`) is skipped alone. Each candidate changes exactly one line's text."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Mutation", "apply", "choose"]

_FLIPS = {
    " == ": " != ",
    " != ": " == ",
    " < ": " >= ",
    " >= ": " < ",
    " > ": " <= ",
    " <= ": " > ",
    " + ": " - ",
    " - ": " + ",
    " * ": " / ",
    " / ": " * ",
    " && ": " || ",
    " || ": " && ",
}
_KIND = {" == ": "comparison", " != ": "comparison", " < ": "comparison", " >= ": "comparison"}
_KIND |= {" > ": "comparison", " <= ": "comparison", " && ": "boolean-op", " || ": "boolean-op"}
_INT = re.compile(r"(?<![\w.'])(\d+)(?![\w.])")
_BOOL = re.compile(r"\b(true|false)\b")
_STRING = re.compile(r'b?"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)\'')


@dataclass(frozen=True)
class Mutation:
    file: str
    line: int
    kind: str
    before: str
    after: str

    @property
    def label(self) -> str:
        return f"{self.file}:{self.line} {self.kind}"


def _code_lines(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    lines = text.splitlines()
    skip_to = 0
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if number <= skip_to:
            continue
        if stripped.startswith("#[cfg(test)]"):
            item = next(
                (n for n in range(number, len(lines)) if not lines[n].strip().startswith("#")),
                None,
            )
            if item is None or not lines[item].rstrip().endswith(";"):
                break
            skip_to = item + 1
            continue
        if not stripped or stripped.startswith(("//", "#", "use ", "pub use ", "*", "/*")):
            continue
        out.append((number, line))
    return out


def _masked(line: str) -> str:
    """`line` with string and char literals blanked (same length) and any comment cut."""
    masked = _STRING.sub(lambda m: " " * len(m.group()), line)
    cut = masked.find("//")
    return masked if cut < 0 else masked[:cut] + " " * (len(masked) - cut)


def _candidates(rel: str, text: str) -> list[Mutation]:
    out: list[Mutation] = []
    for number, line in _code_lines(text):
        masked = _masked(line)
        for op, new in _FLIPS.items():
            at = masked.find(op)
            if at >= 0:
                after = line[:at] + new + line[at + len(op) :]
                out.append(Mutation(rel, number, _KIND.get(op, "operator"), line, after))
        for match in _INT.finditer(masked):
            value = int(match.group(1))
            after = line[: match.start()] + str(value + 1) + line[match.end() :]
            out.append(Mutation(rel, number, "off-by-one", line, after))
        for match in _BOOL.finditer(masked):
            flipped = "false" if match.group(1) == "true" else "true"
            after = line[: match.start()] + flipped + line[match.end() :]
            out.append(Mutation(rel, number, "boolean", line, after))
        stripped = masked.strip()
        balanced = stripped.count("(") == stripped.count(")") and "{" not in stripped
        if (
            stripped.endswith(";")
            and balanced
            and not stripped.startswith(
                ("let ", "return", "const ", "static ", "pub ", "type ", ".")
            )
            and "}" not in stripped
        ):
            out.append(Mutation(rel, number, "removed-statement", line, ""))
    return out


def choose(root: Path, files: list[str], count: int, seed: int) -> list[Mutation]:
    """`count` mutations drawn with `seed`, spread over the files (at most one per line)."""
    every = [m for rel in files for m in _candidates(rel, (root / rel).read_text(encoding="utf-8"))]
    rng = random.Random(seed)
    rng.shuffle(every)
    chosen: list[Mutation] = []
    lines: set[tuple[str, int]] = set()
    for m in every:
        if (m.file, m.line) not in lines:
            lines.add((m.file, m.line))
            chosen.append(m)
        if len(chosen) == count:
            break
    return chosen


def apply(root: Path, m: Mutation) -> None:
    path = root / m.file
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines[m.line - 1] != m.before:
        raise ValueError(f"{m.label}: the line is not what the mutation was drawn from")
    lines[m.line - 1] = m.after
    path.write_text("\n".join(lines), encoding="utf-8")
