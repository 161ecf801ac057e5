"""The Go toolchain on a tiny real module made here, with the real go: findings new since
HEAD are red and those already there are not, a touched package's importers are tested,
a test binary that dies is `died` with its signal, a clean tree has nothing to verify and a
machine without go is `incomplete`."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import anyio
import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, LadderResult, RungName, run_ladder
from git_tree import commit_tree, write

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed on this machine"),
]

A = (
    'package a\n\nimport "fmt"\n\nfunc Add(x, y int) int { return x + y }\n\n'
    "func Show(x int) { fmt.Println(x) }\n"
)
A_TEST = (
    'package a\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
    '\tif Add(1, 2) != 3 {\n\t\tt.Errorf("Add(1, 2) = %d, want 3", Add(1, 2))\n\t}\n}\n'
)
B = 'package b\n\nimport "example.com/m/a"\n\nfunc Twice(x int) int { return a.Add(x, x) }\n'
B_TEST = (
    'package b_test\n\nimport (\n\t"testing"\n\n\t"example.com/m/b"\n)\n\n'
    'func TestTwice(t *testing.T) {\n\tif b.Twice(2) != 4 {\n\t\tt.Fatal("Twice(2) != 4")\n\t}\n}\n'
)
C = "package c\n\nfunc Leaf() int { return 1 }\n"


def _module(root: Path, extra: dict[str, str] | None = None) -> Path:
    files = {
        "go.mod": "module example.com/m\n\ngo 1.21\n",
        "a/a.go": A,
        "a/a_test.go": A_TEST,
        "b/b.go": B,
        "b/b_test.go": B_TEST,
        "c/c.go": C,
        **(extra or {}),
    }
    return commit_tree(root, files)


async def _climb(root: Path, *rungs: RungName, policy: str | None = None) -> LadderResult:
    request = LadderRequest(rungs=list(rungs) or None, policy=policy)  # type: ignore[arg-type]
    return await run_ladder(root, request, bus=InMemoryEventBus("t"))


async def test_a_broken_package_fails_its_importers_tests_too(tmp_path: Path) -> None:
    root = _module(tmp_path)
    write(root, "a/a.go", A.replace("x + y", "x - y"))
    result = await _climb(root, "test.scoped")
    (rung,) = result.rungs
    assert rung.state == "red"
    assert rung.tool == "go test"
    assert {d.file for d in rung.diagnostics} == {"a/a_test.go", "b/b_test.go"}
    assert "example.com/m/a" in rung.command
    assert "example.com/m/b" in rung.command
    assert "example.com/m/c" not in rung.command  # imports nothing touched
    assert any("example.com/m/b imports example.com/m/a" in n for n in rung.notes)
    assert rung.notes[0].startswith("go: go test of 2 package(s)")
    assert result.selection is not None
    assert result.selection.full is False
    assert result.selection.tests == ["a", "b"]  # the folders of the tested packages
    assert result.selection.reasons == [
        "example.com/m/a is touched",
        "example.com/m/b imports example.com/m/a",
    ]


async def test_a_module_file_selects_every_package(tmp_path: Path) -> None:
    root = _module(tmp_path)
    write(root, "go.mod", "module example.com/m\n\ngo 1.22\n")
    result = await _climb(root, "test.scoped")
    assert result.rungs[0].state == "green"
    assert result.selection is not None
    assert result.selection.full is True
    assert result.selection.reasons == ["go.mod changes every package's dependencies"]


async def test_findings_at_head_are_preexisting_and_new_ones_red(tmp_path: Path) -> None:
    old_vet = A + '\nfunc Old() { fmt.Printf("%d\\n", "old") }\n'
    root = _module(tmp_path, {"a/a.go": old_vet})
    # A new line elsewhere in the file: the old finding stays pre-existing.
    write(root, "a/a.go", old_vet + "\nfunc More() int { return 2 }\n")
    same = await _climb(root, "diagnose.files")
    (rung,) = same.rungs
    assert rung.state == "green", rung.reason
    assert rung.preexisting_findings == 1
    assert rung.new_findings == 0
    assert rung.baseline is not None
    assert rung.baseline.startswith("HEAD ")
    write(root, "a/a.go", old_vet + '\nfunc New() { fmt.Printf("%s\\n", 1) }\n')
    worse = await _climb(root, "diagnose.files")
    (rung,) = worse.rungs
    assert rung.state == "red"
    assert (rung.new_findings, rung.preexisting_findings) == (1, 1)
    new = rung.diagnostics[0]
    assert (new.file, new.code, new.source, new.preexisting) == (
        "a/a.go",
        "printf",
        "go vet",
        False,
    )


# HEAD's c.go is not gofmt-formatted already (as google/uuid v1.6.0's uuid.go is under a
# newer gofmt): one finding per changed block of `gofmt -d`, at its first original line.
C_UNFORMATTED = C.replace("func Leaf()", "func   Leaf()") + (
    "\nfunc Mid() int {\n\tx := 1\n\tx++\n\tx++\n\tx++\n\treturn x\n}\n"
)


async def test_a_new_gofmt_break_in_a_file_already_unformatted_at_head_is_red(
    tmp_path: Path,
) -> None:
    root = _module(tmp_path, {"c/c.go": C_UNFORMATTED})
    # Not a formatting change: HEAD's break stays, listed as pre-existing.
    write(root, "c/c.go", C_UNFORMATTED.replace("return x", "return x + 1"))
    (rung,) = (await _climb(root, "diagnose.files")).rungs
    assert rung.state == "green", rung.reason
    assert (rung.new_findings, rung.preexisting_findings) == (0, 1)
    (old,) = rung.diagnostics
    assert (old.file, old.line, old.code, old.source) == ("c/c.go", 3, "gofmt", "gofmt")
    # A new break six lines below HEAD's, in the same gofmt -d hunk: red, naming its line.
    write(root, "c/c.go", C_UNFORMATTED.replace("\tx++\n\tx++\n\tx++", "\tx++\n\tx++\n\tx  ++"))
    (rung,) = (await _climb(root, "diagnose.files")).rungs
    assert rung.state == "red", rung.reason
    assert (rung.new_findings, rung.preexisting_findings) == (1, 1)
    new = rung.diagnostics[0]
    assert (new.file, new.line, new.code, new.preexisting) == ("c/c.go", 9, "gofmt", False)
    assert "c/c.go:9 gofmt" in (rung.reason or "")


C_TEST_BROKEN = (
    'package c\n\nimport "testing"\n\nfunc TestLeafBroken(t *testing.T) {\n'
    '\tif Leaf() != 2 {\n\t\tt.Fatal("Leaf() != 2")\n\t}\n}\n'
)


async def test_a_test_failing_at_head_and_still_failing_is_not_red(tmp_path: Path) -> None:
    root = _module(tmp_path, {"c/c_test.go": C_TEST_BROKEN})
    write(root, "c/c.go", C + "\nfunc Second() int { return 2 }\n")  # code: go test runs
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "green", rung.reason
    assert (rung.new_findings, rung.preexisting_findings) == (0, 1)
    assert "already failing at HEAD" in (rung.reason or "")
    assert (rung.baseline or "").startswith("HEAD ")
    # A test the change broke is red beside it.
    write(root, "a/a.go", A.replace("x + y", "x - y"))
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "red", rung.reason
    assert (rung.new_findings, rung.preexisting_findings) == (2, 1)
    assert [d.preexisting for d in rung.diagnostics] == [False, False, True]


C_TESTS = C_TEST_BROKEN + (
    '\nfunc TestLeafOne(t *testing.T) {\n\tif Leaf() != 1 {\n\t\tt.Fatal("Leaf() != 1")\n\t}\n}\n'
)


async def test_heads_outcome_of_a_packages_every_test_answers_the_later_reds(
    tmp_path: Path,
) -> None:
    # The first red at a HEAD runs the failed tests' packages whole there: a later red at
    # that HEAD failing another of their tests asks HEAD nothing (its baseline is cached).
    root = _module(tmp_path, {"c/c_test.go": C_TESTS})
    write(root, "c/c.go", C + "\nfunc Second() int { return 2 }\n")  # code: go test runs
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "green", rung.reason
    assert (rung.new_findings, rung.preexisting_findings) == (0, 1)
    assert not (rung.baseline or "").endswith("(cached)"), rung.baseline
    write(root, "c/c.go", C.replace("return 1", "return 3"))
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "red", rung.reason
    assert (rung.baseline or "").endswith("(cached)"), rung.baseline
    assert [(d.message.split(":")[0], d.preexisting) for d in rung.diagnostics] == [
        ("example.com/m/c.TestLeafOne", False),
        ("example.com/m/c.TestLeafBroken", True),
    ]
    # A test HEAD does not have, failing: not in HEAD's outcomes, so HEAD is asked; new.
    write(root, "c/more_test.go", C_TEST_BROKEN.replace("TestLeafBroken(", "TestLeafNew("))
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "red", rung.reason
    assert not (rung.baseline or "").endswith("(cached)"), rung.baseline
    new = {d.message.split(":")[0] for d in rung.diagnostics if not d.preexisting}
    assert new == {"example.com/m/c.TestLeafOne", "example.com/m/c.TestLeafNew"}


async def test_a_compile_error_names_its_line_and_gofmt_its_file(tmp_path: Path) -> None:
    root = _module(tmp_path)
    write(root, "c/c.go", C.replace("func Leaf()", "func   Leaf()"))
    result = await _climb(root, policy="standard")
    diagnose, compile_, scoped = result.rungs
    assert diagnose.state == "red"
    assert any(d.code == "gofmt" and d.file == "c/c.go" for d in diagnose.diagnostics)
    assert compile_.state == "skipped"
    assert scoped.state == "skipped"
    write(root, "c/c.go", C)
    write(root, "b/b.go", B.replace("a.Add(x, x)", "a.Add(x, missing)"))
    (compile_,) = (await _climb(root, "compile.project")).rungs
    assert compile_.state == "red"
    assert compile_.tool == "go build"
    (d,) = compile_.diagnostics
    assert (d.file, d.line, d.code) == ("b/b.go", 5, "compile")
    assert "missing" in d.message


async def test_a_compile_error_is_red_at_the_first_rung_that_reports_it(tmp_path: Path) -> None:
    # go vet's type check (diagnose.files) and go test's compiler (test.scoped, started
    # beside it) both see it: the climb ends at whichever is red first, the other stopped or
    # not reached, never green (verify/ahead.py RedBeside).
    root = _module(tmp_path)
    write(root, "b/b.go", B.replace("a.Add(x, x)", "a.Add(x, missing)"))
    result = await _climb(root, policy="standard")
    assert result.state == "red", result
    red = [r for r in result.rungs if r.state == "red"]
    assert len(red) == 1, result.rungs
    assert any(
        (d.file, d.line) == ("b/b.go", 5) and not d.preexisting for d in red[0].diagnostics
    ), red[0].diagnostics
    for rung in result.rungs:
        assert rung.state in ("red", "skipped", "cancelled"), rung
        if rung.state == "cancelled":
            assert rung.reason == f"stopped: {red[0].rung} is red"
            assert rung.stopped_by == red[0].rung


async def test_a_package_that_does_not_build_is_a_build_failure_not_a_test_failure(
    tmp_path: Path,
) -> None:
    # go test fails b's build and a's test: the reason names the package whose build failed
    # and its error's place, and counts the test failure apart (not "2 go test failure(s)").
    root = _module(tmp_path)
    write(root, "b/b.go", B.replace("a.Add(x, x)", "a.Add(x, missing)"))
    write(root, "a/a.go", A.replace("x + y", "x - y"))
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "red", rung.reason
    assert rung.reason is not None
    assert rung.reason == (
        "build failure of package example.com/m/b: 1 error, first b/b.go:5 undefined: missing; "
        "1 go test failure(s), first a/a_test.go:7 example.com/m/a.TestAdd: a_test.go:7: "
        "Add(1, 2) = -1, want 3"
    )
    (build,) = [d for d in rung.diagnostics if d.code == "compile"]
    assert (build.file, build.line) == ("b/b.go", 5)


async def test_a_test_binary_killed_by_a_signal_died(tmp_path: Path) -> None:
    kill = (
        'package c\n\nimport (\n\t"syscall"\n\t"testing"\n)\n\n'
        "func TestLeaf(t *testing.T) {\n\tif Leaf() == 1 {\n"
        "\t\t_ = syscall.Kill(syscall.Getpid(), syscall.SIGKILL)\n\t}\n}\n"
    )
    root = _module(tmp_path)
    write(root, "c/c_test.go", kill)
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "died"
    assert rung.signal == "SIGKILL"
    assert rung.reason is not None
    assert "example.com/m/c.TestLeaf" in rung.reason


async def test_clean_tree_has_nothing_to_verify_and_full_suite_runs(tmp_path: Path) -> None:
    root = _module(tmp_path)
    clean = await _climb(root, policy="standard")
    assert clean.state == "nothing_to_verify", clean.reason
    full = await _climb(root, "test.full")
    (rung,) = full.rungs
    assert full.state == "green"
    assert rung.tool == "go test"
    assert rung.command[-1] == "./..."
    assert any("2 test(s) passed" in n for n in rung.notes)


async def test_without_go_the_ladder_is_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _module(tmp_path)
    write(root, "c/c.go", C.replace("1", "2"))
    git = shutil.which("git")
    assert git is not None
    bin_dir = tmp_path / "bin-without-go"  # git alone, wherever go is installed
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(git)
    monkeypatch.setenv("PATH", str(bin_dir))
    result = await _climb(root, "diagnose.files", "test.scoped")
    assert result.state == "incomplete"
    assert all(r.missing == "go" for r in result.rungs)


async def test_the_package_graph_is_listed_again_only_when_an_import_changes(
    tmp_path: Path,
) -> None:
    root = _module(tmp_path)
    write(root, "a/a.go", A.replace("x + y", "y + x"))
    first = await _climb(root, "compile.project")
    assert not any(n.startswith("package graph:") for n in first.rungs[0].notes)
    # Another body edit: nothing go list reads changed, so the first climb's graph stands.
    write(root, "a/a.go", A.replace("x + y", "x + y + 0"))
    second = await _climb(root, "compile.project")
    (rung,) = second.rungs
    assert rung.state == "green", rung.reason
    assert f"package graph: go list of climb {first.id}" in " ".join(rung.notes)
    assert rung.command[-2:] == ["./a", "./b"]
    # c now imports a: an import changed, so go list runs again.
    c_imports_a = (
        'package c\n\nimport "example.com/m/a"\n\nfunc Leaf() int { return a.Add(1, 0) }\n'
    )
    write(root, "c/c.go", c_imports_a)
    third = await _climb(root, "compile.project")
    (rung,) = third.rungs
    assert rung.state == "green", rung.reason
    assert not any(n.startswith("package graph:") for n in rung.notes)
    assert rung.command[-3:] == ["./a", "./b", "./c"]
    # c back as HEAD has it: the first climb's graph holds again (c imports nothing).
    write(root, "c/c.go", C)
    fourth = await _climb(root, "compile.project")
    (rung,) = fourth.rungs
    assert f"package graph: go list of climb {first.id}" in " ".join(rung.notes)
    assert rung.command[-2:] == ["./a", "./b"]
    # A body edit in another file: go list would read what HEAD has, so the graph stands.
    write(root, "b/b.go", B.replace("a.Add(x, x)", "a.Add(x, x) + 0"))
    fifth = await _climb(root, "compile.project")
    (rung,) = fifth.rungs
    assert rung.state == "green", rung.reason
    assert f"package graph: go list of climb {first.id}" in " ".join(rung.notes)


C_TEST = 'package c\n\nimport "testing"\n\nfunc TestLeaf(t *testing.T) {\n\tt.Skip("later")\n}\n'


async def test_a_package_whose_every_test_was_skipped_checked_nothing(tmp_path: Path) -> None:
    # Green means something was checked: go's package "ok" over tests that all called
    # t.Skip ran no assertion, so test.scoped is skipped, saying so, never green.
    root = _module(tmp_path, {"c/c_test.go": C_TEST})
    write(root, "c/c.go", C.replace("return 1", "return 2"))
    result = await _climb(root, "test.scoped")
    (rung,) = result.rungs
    assert rung.state == "skipped", rung
    assert rung.reason is not None
    assert "every test it ran was skipped (1 skipped" in rung.reason, rung.reason


D = 'package d\n\nimport "example.com/m/a"\n\nfunc Three() int { return a.Add(1, 2) }\n'


async def test_compile_leaves_packages_with_tests_to_the_scoped_tests_that_build_them(
    tmp_path: Path,
) -> None:
    # a and b have tests: test.scoped's go test compiles them (a with its tests), so the
    # climb's go build compiles only d, which imports a and has no test to build it.
    root = _module(tmp_path, {"d/d.go": D})
    write(root, "a/a.go", A.replace("x + y", "y + x"))
    result = await _climb(root, policy="standard")
    assert result.state == "green", result.reason
    _diagnose, compile_, scoped = result.rungs
    assert compile_.state == "green", compile_.reason
    assert compile_.command[-1] == "./d"
    assert "./a" not in compile_.command
    assert any("2 affected package(s) with tests" in n for n in compile_.notes)
    assert "example.com/m/a" in scoped.command
    # Asked alone, compile.project builds every affected package.
    (alone,) = (await _climb(root, "compile.project")).rungs
    assert alone.command[-3:] == ["./a", "./b", "./d"]


E = "package e\n\nfunc One() int { return 1 }\n"
F = 'package f\n\nimport "example.com/m/e"\n\nfunc Two() int { return e.One() + 1 }\n'
F_TEST = (
    'package f\n\nimport "testing"\n\nfunc TestTwo(t *testing.T) {\n'
    '\tif Two() != 2 {\n\t\tt.Fatal("Two() != 2")\n\t}\n}\n'
)


async def test_a_package_without_tests_that_a_tested_package_imports_is_compiled_by_go_test(
    tmp_path: Path,
) -> None:
    # e has no tests, f imports e and has tests: f's go test compiles e as its test
    # binary's dependency, so the climb's go build has nothing left, and a compile error in
    # e is red by test.scoped's build (asked alone too, where go vet cannot say it first).
    root = _module(tmp_path, {"e/e.go": E, "f/f.go": F, "f/f_test.go": F_TEST})
    write(root, "e/e.go", E.replace("return 1", "return 2 - 1"))
    result = await _climb(root, policy="standard")
    assert result.state == "green", result.reason
    _diagnose, compile_, scoped = result.rungs
    assert compile_.state == "skipped", compile_
    assert compile_.reason is not None
    assert "1 imported by a tested package" in compile_.reason, compile_.reason
    assert scoped.command[-1] == "example.com/m/f", scoped.command
    write(root, "e/e.go", E.replace("return 1", "return undefinedName"))
    result = await _climb(root, policy="standard")
    assert result.state == "red", result
    # Red at whichever says it first: go vet's type check or go test's build (never green).
    (red,) = [r for r in result.rungs if r.state == "red"]
    assert red.rung in ("diagnose.files", "test.scoped"), red
    assert any(d.file == "e/e.go" and "undefinedName" in d.message for d in red.diagnostics)
    (build_red,) = (await _climb(root, "test.scoped")).rungs
    assert build_red.state == "red", (build_red.reason, build_red.output)
    assert any(d.file == "e/e.go" and "undefinedName" in d.message for d in build_red.diagnostics)
    # Asked alone, compile.project builds e.
    (alone,) = (await _climb(root, "compile.project")).rungs
    assert alone.state == "red", alone
    assert "./e" in alone.command


async def test_a_compile_error_vet_misses_is_red_by_the_scoped_tests_build(
    tmp_path: Path,
) -> None:
    # A function with no body and no assembly: go vet's type check accepts it, the compiler
    # does not. compile.project leaves a (it has tests) to test.scoped, whose build is red.
    root = _module(tmp_path)
    write(root, "a/a.go", A + "\nfunc NoBody() int\n")
    (vet,) = (await _climb(root, "diagnose.files")).rungs
    assert vet.state == "green", vet.reason
    result = await _climb(root, policy="standard")
    diagnose, compile_, scoped = result.rungs
    # go vet's green, or stopped by the scoped tests' red when that came first.
    assert diagnose.state == "green" or diagnose.stopped_by == "test.scoped", diagnose
    assert compile_.state == "skipped" or compile_.stopped_by == "test.scoped", compile_
    if compile_.state == "skipped":
        assert compile_.reason is not None
        assert "compiled by test.scoped's go test" in compile_.reason
    assert result.state == "red"
    assert scoped.state == "red", scoped.reason
    assert any(
        d.file == "a/a.go" and "missing function body" in d.message for d in scoped.diagnostics
    ), scoped.diagnostics


async def test_the_tests_start_beside_gofmt_and_vet_and_a_red_vet_stops_them(
    tmp_path: Path,
) -> None:
    # go test reads the tree and writes only go's build cache: its work starts with
    # diagnose.files (verify/ahead.py), reported in order; a red diagnose.files leaves it
    # not reached, its process killed.
    root = _module(tmp_path)
    write(root, "a/a.go", A.replace("x + y", "x - y"))
    result = await _climb(root, policy="standard")
    states = [(r.rung, r.state) for r in result.rungs]
    assert states == [
        ("diagnose.files", "green"),
        ("compile.project", "skipped"),
        ("test.scoped", "red"),
    ], result
    scoped = result.rungs[2]
    assert any(n.startswith("started beside diagnose.files, ") for n in scoped.notes), scoped
    # Its duration is its go test's, however much of it ran before the climb reached it.
    assert scoped.duration_s > 0.0
    assert sum(r.climb_s for r in result.rungs) <= result.duration_s
    # A vet finding (a Printf verb with no argument) where the tests pass: vet is red, the
    # tests started beside it are not reached.
    write(root, "a/a.go", A.replace("fmt.Println(x)", 'fmt.Printf("%d\\n")'))
    result = await _climb(root, policy="standard")
    states = [(r.rung, r.state) for r in result.rungs]
    assert states == [
        ("diagnose.files", "red"),
        ("compile.project", "skipped"),
        ("test.scoped", "skipped"),
    ], result
    assert result.rungs[2].reason == "not reached: diagnose.files is red"


A_EXAMPLE = (
    'package a_test\n\nimport (\n\t"fmt"\n\n\t"example.com/m/a"\n)\n\n'
    "// ExampleAdd shows Add.\nfunc ExampleAdd() {\n\tfmt.Println(a.Add(1, 2))\n"
    "\t// Output: 3\n}\n"
)


async def test_a_comment_only_edit_runs_no_build_or_test_but_gofmt_and_vet_answer(
    tmp_path: Path,
) -> None:
    root = _module(tmp_path, {"a/example_test.go": A_EXAMPLE})
    doc = A.replace("func Add(", "// Add adds\n// two ints.\nfunc Add(")
    write(root, "a/a.go", doc)
    write(root, "a/example_test.go", A_EXAMPLE.replace("shows Add.", "shows Add (1 + 2)."))
    result = await _climb(root, policy="standard")
    assert result.state == "green", result
    diagnose, compile_, scoped = result.rungs
    assert diagnose.state == "green"
    assert diagnose.tool == "gofmt+go vet"
    for rung in (compile_, scoped):
        assert rung.state == "skipped"
        assert rung.reason is not None
        assert rung.reason.startswith("the change is only comments in 2 Go file(s)"), rung
        assert not rung.command
    # An example's expected output is a test: its comment is code.
    write(root, "a/example_test.go", A_EXAMPLE.replace("Output: 3", "Output: 4"))
    result = await _climb(root, policy="standard")
    assert result.state == "red", [(r.rung, r.state, r.reason, r.output) for r in result.rungs]
    assert result.rungs[2].state == "red"
    assert any("ExampleAdd" in d.message for d in result.rungs[2].diagnostics)
    # A directive is code too: go test runs.
    write(root, "a/example_test.go", A_EXAMPLE)
    write(root, "a/a.go", A.replace("func Add(", "//go:noinline\nfunc Add("))
    result = await _climb(root, policy="standard")
    assert result.state == "green", result
    assert result.rungs[2].tool == "go test"


QUINE = (
    'package q\n\nimport _ "embed"\n\n// Src is this file.\n//\n//go:embed q.go\nvar Src string\n'
)
QUINE_TEST = (
    'package q\n\nimport (\n\t"strings"\n\t"testing"\n)\n\n'
    'func TestNoTodo(t *testing.T) {\n\tif strings.Contains(Src, "TODO") {\n'
    '\t\tt.Fatal("q.go says TODO")\n\t}\n}\n'
)


async def test_a_comment_edit_of_a_file_its_package_embeds_is_tested(tmp_path: Path) -> None:
    # The package reads its own source (//go:embed q.go): a comment there is data its
    # tests see, so the edit is not comments-only and go test runs (red: the new comment
    # says TODO); a comment edit in a file nothing embeds still runs no go test.
    root = _module(tmp_path, {"q/q.go": QUINE, "q/q_test.go": QUINE_TEST})
    write(root, "q/q.go", QUINE.replace("// Src is this file.", "// Src is this file. TODO"))
    result = await _climb(root, policy="standard")
    states = [(r.rung, r.state) for r in result.rungs]
    assert states == [
        ("diagnose.files", "green"),
        ("compile.project", "skipped"),
        ("test.scoped", "red"),
    ], [(r.rung, r.state, r.reason) for r in result.rungs]
    assert any("TestNoTodo" in d.message for d in result.rungs[2].diagnostics)
    write(root, "q/q.go", QUINE)
    write(root, "a/a.go", A.replace("func Add(", "// Add adds. TODO\nfunc Add("))
    result = await _climb(root, policy="standard")
    assert result.state == "green", result
    assert result.rungs[2].reason is not None
    assert result.rungs[2].reason.startswith("the change is only comments"), result.rungs[2]


async def test_the_warm_up_vets_the_module_once_at_background_priority(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # go vet's analysis of the standard library a package imports is in go's build cache
    # only once a go vet ran: a climb whose red tests stop diagnose.files kills go vet, so
    # the host's warm-up runs it once to its end (toolchains/go/warm.py).
    from agent_habitat.verify.runner import warmup
    from agent_habitat.verify.select.memo import SelectionMemo
    from agent_habitat.workspace import Workspace

    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "true")  # the tests' default is off
    root = _module(tmp_path / "m")
    workspace = Workspace.for_project(root).ensure()
    up = warmup.WarmUp(
        root, workspace=workspace, bus=InMemoryEventBus(str(root)), memo=SelectionMemo()
    )
    with anyio.fail_after(120):
        await up.run()
    item = up.items["lint_baseline"]
    assert item.state == "warm", item
    assert item.detail.startswith("go vet -json ./...")
    assert up.items["type_daemon"].state == "skipped"
    spool = list(workspace.spool_dir.glob("*.diagnose.files.warm-vet.out"))
    assert len(spool) == 1, spool


B_BROKEN = B.replace("a.Add(x, x)", "a.Add(x, missing)")
C_TEST_UNBUILT = (
    'package c\n\nimport "testing"\n\nfunc TestLeaf(t *testing.T) {\n'
    "\tif Leaf() != 1 {\n\t\tt.Fatal(undefinedThing)\n\t}\n}\n"
)


async def test_a_package_already_failing_to_build_at_head_is_not_red(tmp_path: Path) -> None:
    # b does not build at HEAD (and c's tests do not): an edit of a tests a and b, whose
    # build fails as at HEAD: listed as pre-existing, not red; a's tests pass.
    root = _module(tmp_path, {"b/b.go": B_BROKEN, "c/c_test.go": C_TEST_UNBUILT})
    write(root, "a/a.go", A.replace("x + y", "y + x"))
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "green", (rung.reason, rung.diagnostics)
    assert (rung.new_findings, rung.preexisting_findings) == (0, 1)
    (old,) = rung.diagnostics
    assert (old.file, old.line, old.preexisting) == ("b/b.go", 5, True)
    assert rung.reason is not None
    assert "package example.com/m/b already fails to build at HEAD" in rung.reason, rung.reason
    assert (rung.baseline or "").startswith("HEAD "), rung.baseline
    # A test file that does not build at HEAD: not red either (c's tests, c.go edited);
    # but no test ran, so not green (nothing was checked).
    write(root, "a/a.go", A)
    write(root, "c/c.go", C + "\nfunc Second() int { return 2 }\n")
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "error", (rung.reason, rung.diagnostics)
    assert [(d.file, d.preexisting) for d in rung.diagnostics] == [("c/c_test.go", True)]
    assert (rung.reason or "").startswith(
        "no test ran: package example.com/m/c's tests already fail to build at HEAD"
    ), rung.reason


B_OTHER = B_BROKEN + "\nfunc Other() int { return helper() }\n"
B_HELPER = "package b\n\nfunc helper() int { return 1 }\n"


async def test_a_new_error_in_a_package_already_broken_at_head_is_red(tmp_path: Path) -> None:
    root = _module(tmp_path, {"b/b.go": B_OTHER, "b/helper.go": B_HELPER})
    # Another error in b beside HEAD's, on a line HEAD has: HEAD's build is asked, the new
    # error is red and HEAD's is listed.
    write(root, "b/helper.go", "package b\n")
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "red", rung.reason
    assert (rung.new_findings, rung.preexisting_findings) == (1, 1)
    assert [(d.file, d.line, d.preexisting) for d in rung.diagnostics] == [
        ("b/b.go", 7, False),
        ("b/b.go", 5, True),
    ]
    assert rung.reason == (
        "build failure of package example.com/m/b: 1 new error, first b/b.go:7 undefined: "
        "helper (+1 build error(s) already at HEAD, listed, not red)"
    ), rung.reason
    assert (rung.baseline or "").startswith("HEAD "), rung.baseline
    # HEAD's error changed into another on the same line: red (a different error).
    write(root, "b/helper.go", B_HELPER)
    write(root, "b/b.go", B_OTHER.replace("a.Add(x, missing)", 'a.Add(x, "two")'))
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "red", rung.reason
    assert [(d.line, d.preexisting) for d in rung.diagnostics] == [(5, False)]
    # The same for go build (compile.project), which asks HEAD: an error's code says no
    # kind, so only its message matches HEAD's on the line it replaced.
    (built,) = (await _climb(root, "compile.project")).rungs
    assert built.state == "red", built.reason
    assert [(d.line, d.preexisting) for d in built.diagnostics] == [(5, False)]
    assert (built.baseline or "").startswith("HEAD "), built.baseline
    # A new error on an added line beside HEAD's: red without HEAD, the other not compared.
    write(root, "b/b.go", B_OTHER + "\nfunc More() int { return alsoMissing }\n")
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "red", rung.reason
    assert [(d.line, d.preexisting) for d in rung.diagnostics] == [(5, False), (9, False)]
    assert any("HEAD was not asked" in n for n in rung.notes), rung.notes
    assert any("the 1 other build error(s) are not compared" in n for n in rung.notes)
    # A package that built at HEAD and does not now: red, beside b's old failure.
    write(root, "b/b.go", B_OTHER)
    write(root, "c/c.go", C.replace("return 1", "return undefinedLeaf"))
    write(root, "c/c_test.go", C_TEST)
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "red", rung.reason
    assert [(d.file, d.preexisting) for d in rung.diagnostics] == [("c/c.go", False)]


async def test_the_full_suite_compares_builds_and_tests_with_head(tmp_path: Path) -> None:
    # test.full (go test ./..., go's vet step on): b does not build at HEAD and c's test
    # fails there; an unrelated edit is green with both listed, a new failure is red.
    root = _module(tmp_path, {"b/b.go": B_BROKEN, "c/c_test.go": C_TEST_BROKEN})
    write(root, "a/a.go", A.replace("x + y", "y + x"))
    (rung,) = (await _climb(root, "test.full")).rungs
    assert rung.state == "green", (rung.reason, rung.diagnostics)
    assert (rung.new_findings, rung.preexisting_findings) == (0, 2)
    assert rung.reason is not None
    assert "already fails to build at HEAD" in rung.reason, rung.reason
    assert "1 test(s) already failing at HEAD" in rung.reason, rung.reason
    write(root, "a/a.go", A.replace("x + y", "x - y"))
    (rung,) = (await _climb(root, "test.full")).rungs
    assert rung.state == "red", rung.reason
    assert (rung.new_findings, rung.preexisting_findings) == (1, 2)
    assert rung.diagnostics[0].file == "a/a_test.go"


async def test_the_scoped_tests_reuse_heads_go_build_of_compile_project(tmp_path: Path) -> None:
    # compile.project asked alone built ./a and ./b on HEAD (b failing there too): the
    # scoped tests' b, whose build fails as at HEAD, is answered by that go build.
    root = _module(tmp_path, {"b/b.go": B_BROKEN})
    write(root, "a/a.go", A.replace("x + y", "y + x"))
    (built,) = (await _climb(root, "compile.project")).rungs
    assert built.state == "green", built.reason
    assert built.preexisting_findings == 1
    (rung,) = (await _climb(root, "test.scoped")).rungs
    assert rung.state == "green", (rung.reason, rung.diagnostics)
    assert (rung.baseline or "").endswith("(cached)"), rung.baseline
    assert any("HEAD's go build of ./a ./b" in n for n in rung.notes), rung.notes


async def test_a_configured_linter_that_is_not_installed_makes_the_ladder_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The module configures golangci-lint (.golangci.yml) and staticcheck
    # (staticcheck.conf); neither is on PATH, in GOBIN or in GOPATH/bin: gofmt and go vet
    # still answer, but the ladder is not green for the checks it could not make.
    root = _module(
        tmp_path / "m",
        {".golangci.yml": 'version: "2"\n', "staticcheck.conf": 'checks = ["all"]\n'},
    )
    write(root, "a/a.go", A.replace("x + y", "y + x"))
    go, git = shutil.which("go"), shutil.which("git")
    assert go is not None
    assert git is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in (go, git):
        (bin_dir / Path(tool).name).symlink_to(tool)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("GOBIN", str(tmp_path / "gobin"))
    monkeypatch.setenv("GOPATH", str(tmp_path / "gopath"))
    result = await _climb(root, "diagnose.files")
    (rung,) = result.rungs
    assert result.state == "incomplete", (result.state, result.reason)
    assert rung.state == "green", rung.reason
    assert rung.missing == "golangci-lint, staticcheck"
    assert rung.tool == "gofmt+go vet"
    assert rung.reason is not None
    assert "golangci-lint is configured (.golangci.yml) but not installed" in rung.reason
    assert "staticcheck is configured (staticcheck.conf) but not installed" in rung.reason
    assert result.reason is not None
    assert "diagnose.files" in result.reason


def _installed(config: str) -> str | None:
    from agent_habitat.verify.toolchains.go.linters import configured

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / config).write_text("", encoding="utf-8")
        (found,) = configured(Path(folder), os.environ)
    return found.path


def _staticcheck() -> str | None:
    return _installed("staticcheck.conf")


@pytest.mark.skipif(_staticcheck() is None, reason="staticcheck is not installed here")
async def test_staticcheck_runs_with_the_projects_configuration_against_head(
    tmp_path: Path,
) -> None:
    # staticcheck.conf enables every check: a.go has no package comment at HEAD (ST1000,
    # pre-existing); a loop that spins (SA5002) is new. With ST1000 turned off in the
    # project's configuration it is not reported at all.
    root = _module(tmp_path / "all", {"staticcheck.conf": 'checks = ["all"]\n'})
    write(root, "a/a.go", A.replace("x + y", "y + x"))
    (rung,) = (await _climb(root, "diagnose.files")).rungs
    assert rung.state == "green", (rung.reason, rung.diagnostics)
    assert rung.tool == "gofmt+go vet+staticcheck"
    assert [(d.code, d.file, d.preexisting) for d in rung.diagnostics] == [
        ("ST1000", "a/a.go", True)
    ]
    assert any(n.startswith("staticcheck (configured by staticcheck.conf)") for n in rung.notes)
    dead = "\nfunc Spin() {\n\tfor {\n\t}\n}\n"
    write(root, "a/a.go", A + dead)
    (rung,) = (await _climb(root, "diagnose.files")).rungs
    assert rung.state == "red", rung.reason
    assert [(d.code, d.line, d.preexisting) for d in rung.diagnostics] == [
        ("SA5002", 10, False),
        ("ST1000", 1, True),
    ]
    off = _module(tmp_path / "off", {"staticcheck.conf": 'checks = ["all", "-ST1000"]\n'})
    write(off, "a/a.go", A + dead)
    (rung,) = (await _climb(off, "diagnose.files")).rungs
    assert rung.state == "red", rung.reason
    assert [d.code for d in rung.diagnostics] == ["SA5002"]


@pytest.mark.skipif(_staticcheck() is None, reason="staticcheck is not installed here")
async def test_a_configured_linter_that_fails_is_never_green(tmp_path: Path) -> None:
    # A staticcheck.conf staticcheck cannot read: it reports that as a finding in the
    # configuration file and checks nothing; the rung is an error, not green, and HEAD's
    # baseline of gofmt and go vet still holds (a vet finding HEAD had is not red).
    old_vet = A + '\nfunc Old() { fmt.Printf("%d\\n", "old") }\n'
    root = _module(tmp_path, {"staticcheck.conf": "checks = [\n", "a/a.go": old_vet})
    write(root, "a/a.go", old_vet + "\nfunc More() int { return 2 }\n")
    result = await _climb(root, "diagnose.files")
    (rung,) = result.rungs
    assert result.state == "error", (result.state, rung.reason)
    assert rung.state == "error"
    assert rung.reason is not None
    assert rung.reason.startswith("staticcheck could not read its configuration"), rung.reason
    assert (rung.new_findings, rung.preexisting_findings) == (0, 1)
    assert (rung.baseline or "").startswith("HEAD "), rung.baseline


GOLANGCI_V2 = 'version: "2"\nlinters:\n  default: none\n  enable:\n    - errcheck\n'
C_REMOVE = (
    'package c\n\nimport "os"\n\nfunc Leaf() int { return 1 }\n\n'
    'func Clean() {\n\tos.Remove("x")\n}\n'
)


@pytest.mark.skipif(
    _installed(".golangci.yml") is None, reason="golangci-lint is not installed here"
)
async def test_golangci_lint_runs_its_configured_linters_against_head(tmp_path: Path) -> None:
    # .golangci.yml (v2) enables errcheck alone: HEAD's unchecked os.Remove is listed, a new
    # one is red; govet's printf check, which the configuration leaves out, is go vet's.
    root = _module(tmp_path / "v2", {".golangci.yml": GOLANGCI_V2, "c/c.go": C_REMOVE})
    write(root, "c/c.go", C_REMOVE + '\nfunc Again() {\n\tos.Remove("y")\n}\n')
    (rung,) = (await _climb(root, "diagnose.files")).rungs
    assert rung.state == "red", rung.reason
    assert rung.tool == "gofmt+go vet+golangci-lint"
    assert [(d.code, d.line, d.preexisting) for d in rung.diagnostics] == [
        ("errcheck", 12, False),
        ("errcheck", 8, True),
    ]
    # A configuration golangci-lint v2 cannot load (v1's): an error, never green.
    v1 = "linters:\n  disable-all: true\n  enable:\n    - errcheck\n"
    old = _module(tmp_path / "v1", {".golangci.yml": v1})
    write(old, "c/c.go", C.replace("return 1", "return 2"))
    (rung,) = (await _climb(old, "diagnose.files")).rungs
    assert rung.state == "error", rung.reason
    assert rung.reason is not None
    assert rung.reason.startswith("golangci-lint failed (exit 3)"), rung.reason
    assert "unsupported version of the configuration" in rung.reason
