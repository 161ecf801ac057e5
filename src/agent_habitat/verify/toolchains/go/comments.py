"""Whether a Go file is HEAD's code but for its comments: then no test can run differently,
and `compile.project` and `test.scoped` have nothing to do (gofmt and go vet still answer in
diagnose.files).

The file is scanned into Go's tokens with the semicolons the language inserts at line ends
(so joining or splitting lines is a change wherever it changes the code), and a comment is
dropped unless something reads it: a directive (`//go:…`, `//line`, `/*line`, `//export`,
`// +build`), anything in a file that imports "C" (the cgo preamble is a comment), and in a
`_test.go` file any comment inside a `func Example…` body (`// Output:` is the test's
expected output). Line numbers are not compared: code that moves down a line is the same
code, as for Python (`select/same_code.same_code_as_head`).

A file that a `//go:embed` pattern may match is data, not only code: a package that embeds
its own sources (a quine, a "show the code" handler, a test that reads them) sees every
byte of it, comments included. Such an edit is never comments-only (`embeddable`)."""

from __future__ import annotations

import fnmatch
import re
import shlex
from pathlib import Path, PurePosixPath

from ....regular import read_regular
from .listkey import at_head

__all__ = ["code_tokens", "comments_only", "embeddable", "same_code"]

_TOKEN = re.compile(
    r"""(?P<space>[ \t\r]+)
    |(?P<newline>\n)
    |(?P<line_comment>//[^\n]*)
    |(?P<block_comment>/\*.*?\*/)
    |(?P<raw>`[^`]*`)
    |(?P<string>"(?:[^"\\\n]|\\.)*")
    |(?P<rune>'(?:[^'\\\n]|\\.)+')
    |(?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
    |(?P<ident>[^\W\d]\w*)
    |(?P<op>\.\.\.|<<=|>>=|&\^=|&&|\|\||<-|\+\+|--|==|!=|<=|>=|:=|<<|>>|&\^|[-+*/%&|^]=|[^\s\"'`])
    """,
    re.VERBOSE | re.DOTALL,
)
_EMBED = re.compile(r"^[ \t]*//go:embed[ \t](.*)$", re.MULTILINE)
_DIRECTIVE = re.compile(r"^(//go:|//line |/\*line |//export |//\s*\+build)")
_KEYWORDS = frozenset(
    "break case chan const continue default defer else fallthrough for func go goto if "
    "import interface map package range return select struct switch type var".split()
)
_ENDS_LINE = frozenset({"break", "continue", "fallthrough", "return", "++", "--", ")", "]", "}"})


def _semicolon_after(kind: str, text: str) -> bool:
    """Go inserts `;` at a line's end after these tokens (the spec's rule)."""
    if text in _ENDS_LINE:
        return True
    if kind == "ident":
        return text not in _KEYWORDS
    return kind in ("number", "string", "raw", "rune")


def code_tokens(source: str, *, test_file: bool) -> list[str] | None:
    """The file's tokens with Go's inserted semicolons, its comments left out unless they are
    code (see the module's docstring); None when it does not scan as Go."""
    keep_all = '"C"' in source  # cgo: its preamble is a comment (any "C" counts, to be safe)
    out: list[str] = []
    last_kind, last = "", ""
    example = 0  # brace depth inside a func Example… body, 0 outside one
    pending_example = False
    depth = 0
    pos = 0
    for match in _TOKEN.finditer(source):
        if match.start() != pos:
            return None
        pos = match.end()
        kind, text = match.lastgroup or "", match[0]
        breaks = kind == "newline" or (kind == "block_comment" and "\n" in text)
        if kind in ("line_comment", "block_comment"):
            if keep_all or _DIRECTIVE.match(text) or example:
                out.append(text.rstrip())
        if breaks and out and _semicolon_after(last_kind, last):
            out.append(";")
            last_kind, last = "op", ";"
        if kind in ("space", "newline", "line_comment", "block_comment"):
            continue
        if test_file and last == "func" and kind == "ident" and text.startswith("Example"):
            pending_example = True
        if text == "{":
            depth += 1
            if pending_example and depth == 1:
                example, pending_example = 1, False
            elif example:
                example += 1
        elif text == "}":
            depth -= 1
            example = max(example - 1, 0)
        out.append(text)
        last_kind, last = kind, text
    if pos != len(source):
        return None
    return out


def same_code(head: str, now: str, *, test_file: bool) -> bool:
    """Whether `now` is `head` but for comments and layout that no compiler reads."""
    old = code_tokens(head, test_file=test_file)
    return old is not None and old == code_tokens(now, test_file=test_file)


def comments_only(root: Path, head: str, touched: list[str]) -> int:
    """How many of the touched files differ from HEAD only in comments, when every touched
    file is a Go source HEAD has with the same code; 0 otherwise (a file that is not Go, new,
    deleted or under testdata/ or vendor/, or none edited). Blocks: call from a thread."""
    for rel in touched:
        parts = rel.split("/")
        if not rel.endswith(".go") or "testdata" in parts or "vendor" in parts:
            return 0
    olds = at_head(root, head, touched)
    if olds is None:
        return 0
    edited = 0
    for rel in touched:
        try:
            now = read_regular(root / rel, rel)
        except OSError:
            return 0
        old = olds.get(rel)
        if old is None:
            return 0
        if old == now:
            continue
        if not same_code(
            old.decode("utf-8", "replace"),
            now.decode("utf-8", "replace"),
            test_file=rel.endswith("_test.go"),
        ):
            return 0
        edited += 1
    # Read only for a change that is comments-only otherwise: most changes are code.
    return 0 if edited and embeddable(root, touched) else edited


def _patterns(line: str) -> list[str]:
    """A `//go:embed` line's patterns (space-separated, Go-quoted or back-quoted), without
    `all:`; every word when the line does not split (then anything may match)."""
    try:
        words = shlex.split(line.replace("`", '"'), posix=True)
    except ValueError:
        return ["*"]
    return [w.removeprefix("all:") for w in words]


def _matches(pattern: str, rel: PurePosixPath) -> bool:
    """Whether `pattern` (go's path.Match syntax) names `rel` or a folder above it (a
    folder is embedded whole). fnmatch's `*` also crosses `/`: it matches more, never
    less, which keeps this on the safe side."""
    parts = rel.parts
    return any(
        fnmatch.fnmatchcase("/".join(parts[:n]), pattern.rstrip("/"))
        for n in range(1, len(parts) + 1)
    )


def embeddable(root: Path, touched: list[str]) -> bool:
    """Whether a `//go:embed` line of a Go file in a touched file's folder or a folder
    above it (inside the module: embed patterns reach only down from their package's
    folder) may match the touched file. Reads those folders' Go files as they are now: the
    untouched ones are HEAD's. Blocks: call from a thread."""
    seen: dict[Path, list[str]] = {}
    for rel in touched:
        path = PurePosixPath(rel)
        for depth in range(len(path.parts) - 1, -1, -1):
            folder = root.joinpath(*path.parts[:depth])
            if folder not in seen:
                seen[folder] = _embeds_in(folder)
            below = PurePosixPath(*path.parts[depth:])
            if any(_matches(p, below) for p in seen[folder]):
                return True
            if depth and (folder / "go.mod").is_file():
                break  # a nested module's files are not this module's to embed
    return False


def _embeds_in(folder: Path) -> list[str]:
    patterns: list[str] = []
    try:
        names = sorted(e.name for e in folder.iterdir() if e.name.endswith(".go"))
    except OSError:
        return patterns
    for name in names:
        try:
            text = (folder / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "//go:embed" not in text:
            continue
        for line in _EMBED.findall(text):
            patterns.extend(_patterns(line))
    return patterns
