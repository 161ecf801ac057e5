"""A Go file that is HEAD's code but for its comments (verify/toolchains/go/comments.py):
doc comments and layout are not code; directives, cgo preambles, an example's expected
output and a line break that changes Go's inserted semicolons are."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_habitat.verify.toolchains.go.comments import code_tokens, embeddable, same_code

A = (
    'package a\n\nimport "fmt"\n\n// Add adds.\nfunc Add(x, y int) int { return x + y }\n\n'
    "func Show(x int) { fmt.Println(x) }\n"
)
EXAMPLE = (
    'package a_test\n\nimport "fmt"\n\n// ExampleAdd shows Add.\nfunc ExampleAdd() {\n'
    "\tfmt.Println(3)\n\t// Output: 3\n}\n"
)
CGO = 'package a\n\n// #include <stdio.h>\nimport "C"\n\nfunc F() {}\n'


@pytest.mark.parametrize(
    "now",
    [
        A.replace("// Add adds.", "// Add adds two ints.\n// It never fails."),
        A.replace("return x + y", "return x /* the sum */ + y"),
        A.replace("// Add adds.\n", "") + "\n// trailing words\n",
        A.replace("fmt.Println(x) }", "fmt.Println(x) } // shows"),
    ],
)
def test_comment_edits_are_the_same_code(now: str) -> None:
    assert same_code(A, now, test_file=False)


@pytest.mark.parametrize(
    "now",
    [
        A.replace("return x + y", "return x - y"),
        A.replace("// Add adds.", "//go:noinline"),
        A.replace("// Add adds.", "// +build linux"),
        A.replace("// Add adds.", "//export Add"),
        A.replace("// Add adds.", "//line other.go:10"),
        # `return` then a newline is `return;`: the value is a new statement.
        A.replace("return x + y", "return // nothing\nx + y"),
    ],
)
def test_code_and_directives_are_not_comments(now: str) -> None:
    assert not same_code(A, now, test_file=False)


def test_an_examples_expected_output_is_code_in_a_test_file() -> None:
    changed = EXAMPLE.replace("Output: 3", "Output: 4")
    assert not same_code(EXAMPLE, changed, test_file=True)
    assert same_code(EXAMPLE, EXAMPLE.replace("shows Add.", "shows Add well."), test_file=True)


def test_a_cgo_preamble_is_code() -> None:
    assert not same_code(CGO, CGO.replace("stdio.h", "stdlib.h"), test_file=False)


def test_literals_scan_whole_and_what_is_not_go_is_never_the_same() -> None:
    tokens = code_tokens("x := 1e+5; y := `a\n// b`; z := '\\n'\n", test_file=False)
    assert tokens == ["x", ":=", "1e+5", ";", "y", ":=", "`a\n// b`", ";", "z", ":=", "'\\n'", ";"]
    assert code_tokens('s := "open\n', test_file=False) is None
    assert not same_code('s := "open\n', 's := "open\n', test_file=False)


def test_a_file_an_embed_pattern_may_match_is_embeddable(tmp_path: Path) -> None:
    # A package that embeds its own sources sees their comments: editing one is not
    # comments-only. Patterns reach down from their package's folder: a folder whole, a
    # glob, a quoted name; never up, nor into a nested module.
    files = {
        "q/q.go": 'package q\n\nimport _ "embed"\n\n//go:embed q.go\nvar src string\n',
        "q/r.go": "package q\n",
        "t/t.go": 'package t\n\n//go:embed all:sub "x y.txt"\nvar f embed.FS\n',
        "t/sub/s.go": "package sub\n",
        "t/u.go": "package t\n",
        "g/g.go": "package g\n\n//go:embed *.go\nvar f embed.FS\n",
        "g/inner/go.mod": "module inner\n",
        "g/inner/i.go": "package inner\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert embeddable(tmp_path, ["q/q.go"])
    assert not embeddable(tmp_path, ["q/r.go"])
    assert embeddable(tmp_path, ["t/sub/s.go"])
    assert not embeddable(tmp_path, ["t/u.go"])
    assert embeddable(tmp_path, ["g/g.go"])
    assert not embeddable(tmp_path, ["g/inner/i.go"])
