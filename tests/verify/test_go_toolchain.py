"""The Go toolchain's pieces on outputs captured from go 1.26 (go list, go build, go vet
-json, gofmt -d, go test -json): which paths are Go's, the affected packages and tests,
and the findings each tool's output becomes."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from agent_habitat.verify.snapshot import take_snapshot
from agent_habitat.verify.toolchains import TOOLCHAINS, detected
from agent_habitat.verify.toolchains.go.detect import detect, owns
from agent_habitat.verify.toolchains.go.listkey import list_key
from agent_habitat.verify.toolchains.go.parse import (
    parse_build,
    parse_gofmt_diff,
    parse_test_events,
    parse_vet,
    visible,
)
from agent_habitat.verify.toolchains.go.project import affected, dirs_of, parse_list
from git_tree import commit_tree, write

ROOT = Path("/tmp/gos")

# `go list -e -test -json=ImportPath,Dir,ForTest,Deps,GoFiles,TestGoFiles,XTestGoFiles ./...`
# on a module with a/ (tests inside) and b/ (imports a; external tests), stdlib deps cut.
LIST = "\n".join(
    json.dumps(e, indent="\t")
    for e in [
        {
            "Dir": "/tmp/gos/a",
            "ImportPath": "example.com/m/a",
            "GoFiles": ["a.go"],
            "Deps": ["fmt"],
            "TestGoFiles": ["a_test.go"],
        },
        {
            "Dir": "/tmp/gos/b",
            "ImportPath": "example.com/m/b",
            "GoFiles": ["b.go"],
            "Deps": ["example.com/m/a"],
            "XTestGoFiles": ["b_test.go"],
        },
        {"Dir": "/tmp/gos/c", "ImportPath": "example.com/m/c", "GoFiles": ["c.go"], "Deps": []},
        {
            "Dir": "/tmp/gos/a",
            "ImportPath": "example.com/m/a.test",
            "GoFiles": ["/root/.cache/go-build/f6/f6-d"],
            "Deps": ["example.com/m/a [example.com/m/a.test]"],
        },
        {
            "Dir": "/tmp/gos/a",
            "ImportPath": "example.com/m/a [example.com/m/a.test]",
            "ForTest": "example.com/m/a",
            "GoFiles": ["a.go", "a_test.go"],
            "Deps": [],
            "TestGoFiles": ["a_test.go"],
        },
        {
            "Dir": "/tmp/gos/b",
            "ImportPath": "example.com/m/b_test [example.com/m/b.test]",
            "ForTest": "example.com/m/b",
            "GoFiles": ["b_test.go"],
            "Deps": ["example.com/m/a", "example.com/m/b"],
        },
        {"Dir": "/usr/local/go/src/fmt", "ImportPath": "fmt", "Standard": True},
    ]
)


def test_detect_and_owns(tmp_path: Path) -> None:
    assert not detect(tmp_path)
    (tmp_path / "go.mod").write_text("module example.com/m\n", encoding="utf-8")
    assert detect(tmp_path)
    assert [c.name for c in detected(tmp_path)] == ["go"]
    assert "go" in TOOLCHAINS
    assert owns("a/a.go")
    assert owns("go.sum")
    assert owns("a/testdata/in.txt")
    assert not owns("README.md")
    assert not owns("testdata")


def test_the_graph_folds_test_variants_and_leaves_stdlib_out() -> None:
    graph = parse_list(LIST, ROOT)
    assert sorted(graph) == ["example.com/m/a", "example.com/m/b", "example.com/m/c"]
    b = graph["example.com/m/b"]
    assert b.dir == "b"
    assert b.deps == {"example.com/m/a"}
    assert b.has_tests
    assert graph["example.com/m/a"].files == {"a/a.go", "a/a_test.go"}
    assert not graph["example.com/m/c"].has_tests


def test_a_touched_package_reaches_its_importers_tests() -> None:
    graph = parse_list(LIST, ROOT)
    aff = affected(graph, ["a/a.go", "README.md"])
    assert not aff.full
    assert aff.touched == ["example.com/m/a"]
    assert aff.importers == ["example.com/m/b"]
    assert aff.tests == ["example.com/m/a", "example.com/m/b"]
    assert "example.com/m/b imports example.com/m/a" in aff.reasons
    assert dirs_of(graph, aff.packages) == ["./a", "./b"]
    # A leaf: only itself, and no test to run.
    leaf = affected(graph, ["c/c.go"])
    assert leaf.packages == ["example.com/m/c"]
    assert leaf.tests == []
    # testdata belongs to the package whose folder holds it.
    assert affected(graph, ["a/testdata/x/in.txt"]).touched == ["example.com/m/a"]


def test_a_reason_names_an_affected_package_without_tests_as_such() -> None:
    # agnivade/levenshtein v1.2.0: fuzz/ imports the root package and has no test files; the
    # selection "1 test path(s)" listed it as a second reason with no word of that.
    graph = parse_list(LIST, ROOT)
    c = graph["example.com/m/c"]
    graph["example.com/m/c"] = replace(c, deps=frozenset({"example.com/m/a"}))
    aff = affected(graph, ["a/a.go", "c/c.go"])
    assert aff.tests == ["example.com/m/a", "example.com/m/b"]
    assert "example.com/m/c is touched (no test files)" in aff.reasons
    assert "example.com/m/a is touched" in aff.reasons
    aff = affected(graph, ["a/a.go"])
    assert "example.com/m/c imports example.com/m/a (no test files)" in aff.reasons
    assert "example.com/m/b imports example.com/m/a" in aff.reasons


def test_module_files_and_unknown_packages_widen_to_everything() -> None:
    graph = parse_list(LIST, ROOT)
    for touched in (["go.mod"], ["vendor/x/y.go"], ["gone/gone.go"]):
        aff = affected(graph, touched)
        assert aff.full, touched
        assert aff.tests == ["example.com/m/a", "example.com/m/b"]
        assert aff.reasons


def test_build_errors_relative_to_where_go_ran() -> None:
    text = (
        "# example.com/m/a\n"
        "./z.go:2:23: undefined: undefinedThing\n"
        "./z.go:3:26: cannot use 3 (untyped int constant) as string value in return statement\n"
    )
    found = parse_build(text, ROOT, cwd=ROOT / "a")
    assert [(d.file, d.line, d.col, d.code) for d in found] == [
        ("a/z.go", 2, 23, "compile"),
        ("a/z.go", 3, 26, "compile"),
    ]
    assert found[0].message == "undefined: undefinedThing"
    assert found[0].source == "go build"
    twice = (
        "# example.com/m/a\na/z.go:2:23: undefined: x\n"
        "# [example.com/m/a]\na/z.go:2:23: undefined: x\n"
    )
    assert len(parse_build(twice, ROOT)) == 1


def test_vet_json_and_vet_type_errors() -> None:
    text = (
        '# example.com/m/a\n{\n\t"example.com/m/a": {\n\t\t"printf": [\n\t\t\t{\n'
        '\t\t\t\t"posn": "/tmp/gos/a/a.go:7:26",\n\t\t\t\t"end": "/tmp/gos/a/a.go:7:28",\n'
        '\t\t\t\t"message": "fmt.Printf format %d has arg \\"s\\" of wrong type string"\n'
        "\t\t\t}\n\t\t]\n\t}\n}\n{}\n"
    )
    (d,) = parse_vet(text, ROOT)
    assert (d.file, d.line, d.col, d.code, d.source) == ("a/a.go", 7, 26, "printf", "go vet")
    assert "wrong type string" in d.message
    broken = "# example.com/m/a\n# [example.com/m/a]\nvet: a/z.go:2:23: undefined: undefinedThing\n"
    (e,) = parse_vet(broken, ROOT)
    assert (e.file, e.line, e.code) == ("a/z.go", 2, "typecheck")


# `go vet -json ./...` and `go vet ./...` (go1.26) on `fmt.Sprintf("%\b", 1)`: the message
# quotes the directive with the backspace itself in it.
VET_BACKSPACE_JSON = (
    '{\n\t"example.com/calc": {\n\t\t"printf": [\n\t\t\t{\n'
    '\t\t\t\t"posn": "/tmp/gos/calc.go:12:41",\n\t\t\t\t"end": "/tmp/gos/calc.go:12:44",\n'
    '\t\t\t\t"message": "fmt.Sprintf format %\\b has unknown verb \\b"\n'
    "\t\t\t}\n\t\t]\n\t}\n}\n"
)
VET_BACKSPACE_LINE = "calc.go:12:41: fmt.Sprintf format %\b has unknown verb \b\n"


def test_control_characters_in_go_messages_are_written_out_not_passed_raw() -> None:
    (d,) = parse_vet(VET_BACKSPACE_JSON, ROOT)
    assert d.message == "fmt.Sprintf format %\\b has unknown verb \\b"
    (b,) = parse_build(VET_BACKSPACE_LINE, ROOT, source="go vet")
    assert b.message == "fmt.Sprintf format %\\b has unknown verb \\b"
    # A form feed is a line end to splitlines, not to Go: the message stays one finding.
    (f,) = parse_build("a.go:1:2: bad \f and \x1b[1m here\n", ROOT)
    assert f.message == "bad \\f and \\x1b[1m here"
    assert visible("line one\n\tline two\x7f") == "line one\n\tline two\\x7f"
    events = _events(
        {"Action": "run", "Package": "example.com/m/a", "Test": "TestBell"},
        {
            "Action": "output",
            "Package": "example.com/m/a",
            "Test": "TestBell",
            "Output": '    a_test.go:3: got "\\a\x07"\n',
        },
        {"Action": "fail", "Package": "example.com/m/a", "Test": "TestBell", "Elapsed": 0},
        {"Action": "fail", "Package": "example.com/m/a", "Elapsed": 0},
    )
    (t,) = parse_test_events(events, ROOT, {"example.com/m/a": ROOT / "a"}).failures
    assert "\x07" not in t.message
    assert t.message.endswith('got "\\a\\a"')


# `gofmt -d a/c.go a/d.go a/e.go` (go1.26): a hunk with three runs of changed lines (one
# only adds a blank line), a file without a final newline, a file it cannot parse.
GOFMT_DIFF = """diff a/c.go.orig a/c.go
--- a/c.go.orig
+++ a/c.go
@@ -1,10 +1,11 @@
 package c
 
-func   Leaf() int { return 1 }
+func Leaf() int { return 1 }
 
 var x = 1
+
 func B() {
 \tif true {
-    return
+\t\treturn
 \t}
 }
diff a/d.go.orig a/d.go
--- a/d.go.orig
+++ a/d.go
@@ -1,2 +1,3 @@
 package d
-func X(  ) {}
\\ No newline at end of file
+
+func X() {}
a/e.go:2:7: expected ')', found 'EOF'
"""


def test_gofmt_diff_gives_a_finding_per_changed_run_and_syntax_errors() -> None:
    found = parse_gofmt_diff(GOFMT_DIFF, ROOT)
    assert [(d.file, d.line, d.code) for d in found] == [
        ("a/e.go", 2, "syntax"),
        ("a/c.go", 3, "gofmt"),
        ("a/c.go", 6, "gofmt"),  # the blank line goes before `func B() {`
        ("a/c.go", 8, "gofmt"),
        ("a/d.go", 2, "gofmt"),
    ]
    assert "gofmt -w a/c.go" in found[1].message
    assert found[1].message == found[2].message  # no line in it: HEAD's findings match
    assert parse_gofmt_diff(GOFMT_DIFF, ROOT, cwd=ROOT / "sub")[1].file == "sub/a/c.go"


def _events(*events: dict[str, object]) -> str:
    return "\n".join(json.dumps(e) for e in events) + "\n"


def test_failed_tests_point_at_their_line() -> None:
    text = _events(
        {"Action": "start", "Package": "example.com/m/a"},
        {"Action": "run", "Package": "example.com/m/a", "Test": "TestAdd"},
        {
            "Action": "output",
            "Package": "example.com/m/a",
            "Test": "TestAdd",
            "Output": "=== RUN   TestAdd\n",
        },
        {
            "Action": "output",
            "Package": "example.com/m/a",
            "Test": "TestAdd",
            "Output": "    a_test.go:7: Add(1, 2) = 3, want 4\n",
        },
        {
            "Action": "output",
            "Package": "example.com/m/a",
            "Test": "TestAdd",
            "Output": "--- FAIL: TestAdd (0.00s)\n",
        },
        {"Action": "fail", "Package": "example.com/m/a", "Test": "TestAdd", "Elapsed": 0},
        {"Action": "pass", "Package": "example.com/m/a", "Test": "TestOK", "Elapsed": 0},
        {
            "Action": "output",
            "Package": "example.com/m/a",
            "Output": "FAIL\texample.com/m/a\t0.073s\n",
        },
        {"Action": "fail", "Package": "example.com/m/a", "Elapsed": 0.149},
        {
            "Action": "output",
            "Package": "example.com/m/c",
            "Output": "ok  \texample.com/m/c\t(cached)\n",
        },
        {"Action": "pass", "Package": "example.com/m/c", "Elapsed": 0},
    )
    run = parse_test_events(text, ROOT, {"example.com/m/a": ROOT / "a"})
    (d,) = run.failures
    assert (d.file, d.line, d.code, d.source) == ("a/a_test.go", 7, "FAIL", "go test")
    assert d.message.startswith("example.com/m/a.TestAdd: ")
    assert "want 4" in d.message
    assert run.died is None
    assert (run.passed, run.failed, run.cached) == (1, 1, 1)
    assert run.packages == {"example.com/m/a": "fail", "example.com/m/c": "pass"}


def test_a_killed_test_binary_died_by_its_signal() -> None:
    text = _events(
        {"Action": "run", "Package": "example.com/m/b", "Test": "TestKill"},
        {
            "Action": "output",
            "Package": "example.com/m/b",
            "Test": "TestKill",
            "Output": "=== RUN   TestKill\n",
        },
        {
            "Action": "output",
            "Package": "example.com/m/b",
            "Test": "TestKill",
            "Output": "signal: killed\n",
        },
        {
            "Action": "output",
            "Package": "example.com/m/b",
            "Output": "FAIL\texample.com/m/b\t0.006s\n",
        },
        {"Action": "fail", "Package": "example.com/m/b", "Elapsed": 0.007},
    )
    run = parse_test_events(text, ROOT)
    assert run.died == ("example.com/m/b.TestKill", "SIGKILL")
    assert run.failures[0].code == "SIGKILL"


def test_a_panic_died_with_the_test_named() -> None:
    text = _events(
        {"Action": "run", "Package": "example.com/m/b", "Test": "TestPanic"},
        {
            "Action": "output",
            "Package": "example.com/m/b",
            "Test": "TestPanic",
            "Output": "--- FAIL: TestPanic (0.00s)\n",
        },
        {
            "Action": "output",
            "Package": "example.com/m/b",
            "Test": "TestPanic",
            "Output": "panic: runtime error: invalid memory address or nil pointer "
            "dereference [recovered]\n",
        },
        {
            "Action": "output",
            "Package": "example.com/m/b",
            "Test": "TestPanic",
            "Output": "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4f]\n",
        },
        {"Action": "fail", "Package": "example.com/m/b", "Test": "TestPanic", "Elapsed": 0},
        {"Action": "fail", "Package": "example.com/m/b", "Elapsed": 0.04},
    )
    run = parse_test_events(text, ROOT)
    assert run.died == ("example.com/m/b.TestPanic", "SIGSEGV")
    assert run.died_how.startswith("panic: runtime error")
    assert len(run.failures) == 1  # the package's failure is its test's


def test_a_build_failure_is_the_compiler_errors() -> None:
    text = _events(
        {
            "ImportPath": "example.com/m/a [example.com/m/a.test]",
            "Action": "build-output",
            "Output": "# example.com/m/a\n",
        },
        {
            "ImportPath": "example.com/m/a [example.com/m/a.test]",
            "Action": "build-output",
            "Output": "a/a.go:7:26: undefined: y\n",
        },
        {"ImportPath": "example.com/m/a [example.com/m/a.test]", "Action": "build-fail"},
        {
            "Action": "output",
            "Package": "example.com/m/a",
            "Output": "FAIL\texample.com/m/a [build failed]\n",
        },
        {
            "Action": "fail",
            "Package": "example.com/m/a",
            "Elapsed": 0.001,
            "FailedBuild": "example.com/m/a [example.com/m/a.test]",
        },
    )
    run = parse_test_events(text, ROOT)
    (d,) = run.failures
    assert (d.file, d.line, d.message) == ("a/a.go", 7, "undefined: y")
    assert run.died is None


def test_a_build_failure_that_fails_its_importers_too_is_told_once() -> None:
    # go-humanize v1.0.1, a compile error in comma.go: go builds the package once and fails
    # both it and english/, which imports it, naming the same FailedBuild.
    pkg, importer = "example.com/m", "example.com/m/english"
    text = _events(
        {"ImportPath": pkg, "Action": "build-output", "Output": f"# {pkg}\n"},
        {
            "ImportPath": pkg,
            "Action": "build-output",
            "Output": "./comma.go:42:13: cannot use v (variable of type int64) as string value\n",
        },
        {"ImportPath": pkg, "Action": "build-fail"},
        {"Action": "output", "Package": pkg, "Output": f"FAIL\t{pkg} [build failed]\n"},
        {"Action": "fail", "Package": pkg, "Elapsed": 0, "FailedBuild": pkg},
        {"Action": "output", "Package": importer, "Output": f"FAIL\t{importer} [build failed]\n"},
        {"Action": "fail", "Package": importer, "Elapsed": 0, "FailedBuild": pkg},
    )
    run = parse_test_events(text, ROOT)
    (d,) = run.failures
    assert (d.file, d.line, d.col) == ("comma.go", 42, 13)
    assert run.packages == {pkg: "fail", importer: "fail"}


def test_a_parent_failed_by_its_subtests_is_not_repeated() -> None:
    pkg = "example.com/m/a"
    text = _events(
        {"Action": "run", "Package": pkg, "Test": "TestT"},
        {"Action": "run", "Package": pkg, "Test": "TestT/case"},
        {
            "Action": "output",
            "Package": pkg,
            "Test": "TestT/case",
            "Output": "    a_test.go:9: bad\n",
        },
        {"Action": "output", "Package": pkg, "Test": "TestT/case", "Output": "        more\n"},
        {"Action": "fail", "Package": pkg, "Test": "TestT/case", "Elapsed": 0},
        {
            "Action": "output",
            "Package": pkg,
            "Test": "TestT",
            "Output": "--- FAIL: TestT (0.00s)\n",
        },
        {"Action": "fail", "Package": pkg, "Test": "TestT", "Elapsed": 0},
        {"Action": "fail", "Package": pkg, "Elapsed": 0.1},
    )
    (d,) = parse_test_events(text, ROOT, {pkg: ROOT / "a"}).failures
    assert d.message == f"{pkg}.TestT/case: a_test.go:9: bad\n    more"
    assert (d.file, d.line) == ("a/a_test.go", 9)


def test_the_list_key_changes_with_what_go_list_reads_only(tmp_path: Path) -> None:
    body = 'package a\n\nimport "fmt"\n\nfunc F() { fmt.Println(1) }\n'
    root = commit_tree(tmp_path / "m", {"go.mod": "module m\n\ngo 1.21\n", "a/a.go": body})
    go = shutil.which("go") or "/bin/sh"  # any file: the key stats it

    def key() -> str | None:
        return list_key(root, take_snapshot(root), go, {})

    base = key()
    assert base is not None
    write(root, "a/a.go", body.replace("1)", "2)"))  # a body edit: HEAD's graph holds
    assert key() == base
    write(root, "a/a.go", body.replace('"fmt"', '"os"'))  # an import
    assert key() != base
    write(root, "a/a.go", body)
    write(root, "a/notes.txt", "new\n")  # a new file (an embed pattern may match it)
    assert key() != base
    (root / "a" / "notes.txt").unlink()
    (root / "go.mod").unlink()  # a deleted file
    assert key() != base


# `staticcheck -f json ./c ./a` (staticcheck 2026.1 / v0.8.2, checks = ["all"]): a package
# that does not compile has no place, its message carries the compiler's.
STATICCHECK = (
    '{"code":"compile","severity":"error","location":{"file":"","line":0,"column":0},'
    '"end":{"file":"","line":0,"column":0},'
    '"message":"# example.com/m/c\\nc/c.go:6:2: declared and not used: x"}\n'
    '{"code":"SA5009","severity":"error","location":{"file":"/tmp/gos/a/a.go","line":7,'
    '"column":31},"end":{"file":"/tmp/gos/a/a.go","line":7,"column":37},'
    '"message":"Printf format %d reads arg #1, but call has only 0 args"}\n'
)


def test_staticcheck_json_findings() -> None:
    from agent_habitat.verify.toolchains.go.linters import parse_staticcheck

    compile_, printf = parse_staticcheck(STATICCHECK, ROOT)
    assert (compile_.file, compile_.line, compile_.code) == (None, None, "compile")
    assert (printf.file, printf.line, printf.col, printf.code) == ("a/a.go", 7, 31, "SA5009")
    assert (printf.source, printf.severity) == ("staticcheck", "error")
