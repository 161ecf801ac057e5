"""The Go harness's mutations (bench/ladder/go_ladder_harness.py): seeded single-line edits
of a module's non-test `.go` files: comparison flips, `+`/`-`, `&&`/`||`, off-by-one integer
constants, `true`/`false`, removed statements; lines with a string literal or a comment
are left alone."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Mutation", "apply", "candidates"]

_SWAPS = [
    (" == ", " != "), (" != ", " == "), (" < ", " >= "), (" >= ", " < "),
    (" > ", " <= "), (" <= ", " > "), (" + ", " - "), (" - ", " + "),
    (" && ", " || "), (" || ", " && "), ("true", "false"), ("false", "true"),
]  # fmt: skip
_INT = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
_STATEMENT = re.compile(r"^\s+[\w.\[\]]+(\s*[-+*/]?=\s*|\+\+$|--$|\(.*\)$)")


@dataclass(frozen=True)
class Mutation:
    file: str
    line: int
    kind: str
    before: str
    after: str


def candidates(root: Path) -> list[Mutation]:
    out: list[Mutation] = []
    for path in sorted(root.rglob("*.go")):
        rel = path.relative_to(root).as_posix()
        if rel.endswith("_test.go") or "testdata/" in rel or rel.startswith(("vendor/", ".")):
            continue
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = text.strip()
            if (
                not code
                or any(c in text for c in ('"', "`", "'", "//", "/*"))
                or code.startswith(("import", "package", "case", "func", "type"))
            ):
                continue
            for old, new in _SWAPS:
                if old in text and (
                    old.strip().isalpha() is False or re.search(rf"\b{old}\b", text)
                ):
                    kind = "boolean" if old in ("true", "false") else "operator"
                    out.append(Mutation(rel, number, kind, text, text.replace(old, new, 1)))
            for m in _INT.finditer(text):
                value = str(int(m[1]) + 1)
                out.append(
                    Mutation(
                        rel, number, "constant", text, text[: m.start()] + value + text[m.end() :]
                    )
                )
            if _STATEMENT.match(text) and not code.endswith(("{", ",")):
                indent = text[: len(text) - len(text.lstrip())]
                out.append(Mutation(rel, number, "removed", text, f"{indent}_ = 0 // removed"))
    return out


def apply(root: Path, m: Mutation, text: str | None = None) -> None:
    path = root / m.file
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[m.line - 1] = m.after if text is None else text
    path.write_text("\n".join(lines), encoding="utf-8")
