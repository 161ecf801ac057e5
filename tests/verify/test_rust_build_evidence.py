"""A failed `cargo test` build's word on the crates' own code (toolchains/rust/
build_evidence.py): which errors are the plain library's and binaries' (what `cargo check
--lib --bins` checks), and whether that is all of them. cargo's output as cargo 1.95 writes
it (stdout's JSON and stderr's lines in one stream); the real build is in
test_rust_lib_check.py."""

from __future__ import annotations

import json
from pathlib import Path

from agent_habitat.verify.toolchains.rust.build_evidence import PlainBuilds, plain_errors
from agent_habitat.verify.toolchains.rust.metadata import Crate, CrateGraph

ROOT = Path("/p")
_ENDED = '{"reason":"build-finished","success":false}'


def _graph(bins: tuple[str, ...] = (), dev_paths: bool = False) -> CrateGraph:
    units = ("--lib", "--bins") if bins else ("--lib",)
    crate = Crate(
        "lc", ".", frozenset(), frozenset(), unit_tests=units, bin_targets=bins, dev_paths=dev_paths
    )
    return CrateGraph(root=ROOT, crates={"lc": crate})


def _target(kind: str, name: str = "lc") -> dict[str, object]:
    return {"kind": [kind], "crate_types": [kind], "name": name, "src_path": "/p/src/lib.rs"}


def _error(line: int, code: str | None = "E0277", kind: str = "lib", name: str = "lc") -> str:
    spans = [{"file_name": "src/lib.rs", "line_start": line, "column_start": 5, "is_primary": True}]
    message = {
        "level": "error",
        "message": f"error at {line}",
        "code": {"code": code} if code else None,
        "spans": spans if code != "none" else [],
        "rendered": f"error[{code}]: error at {line}",
    }
    item = {
        "reason": "compiler-message",
        "package_id": "path+file:///p#0.1.0",
        "manifest_path": "/p/Cargo.toml",
        "target": _target(kind, name),
        "message": message,
    }
    return json.dumps(item)


def _built(kind: str = "lib", test: bool = False, name: str = "lc") -> str:
    item = {
        "reason": "compiler-artifact",
        "package_id": "path+file:///p#0.1.0",
        "manifest_path": "/p/Cargo.toml",
        "target": _target(kind, name),
        "profile": {"test": test},
        "fresh": False,
    }
    return json.dumps(item)


def _failed(unit: str) -> str:
    return f"error: could not compile `lc` ({unit}) due to 1 previous error"


def _run(*lines: str) -> str:
    return "\n".join(["   Compiling lc v0.1.0 (/p)", *lines, _ENDED, ""])


def _lines(text: str, graph: CrateGraph | None = None) -> tuple[list[int | None], bool] | None:
    got = plain_errors(text, graph or _graph(), ["lc"])
    return None if got is None else ([d.line for d in got.errors], got.complete)


def test_the_plain_librarys_failure_alone_tells_all_its_errors() -> None:
    # One job: cargo stopped at the library, its test harness never built.
    assert _lines(_run(_error(2), _error(9), _failed("lib"))) == ([2, 9], True)
    found = plain_errors(_run(_error(2), _failed("lib")), _graph(), ["lc"])
    assert found is not None
    assert found.errors[0].source == "cargo check"


def test_both_units_failing_tell_the_errors_said_twice_and_leave_the_rest_unknown() -> None:
    both = _run(_error(2), _error(2), _error(11), _failed("lib"), _failed("lib test"))
    assert _lines(both) == ([2], False)
    twice = _run(_error(2), _error(2), _failed("lib"), _failed("lib test"))
    assert _lines(twice) == ([2], True)


def test_a_failed_test_harness_beside_a_built_library_tells_no_error_of_its_own_code() -> None:
    assert _lines(_run(_built(), _error(11), _failed("lib test"))) == ([], True)
    # The library itself never built: its errors are unknown.
    assert _lines(_run(_error(11), _failed("lib test"))) == ([], False)


def test_a_binary_is_told_by_its_own_units_or_by_its_library_failing_first() -> None:
    graph = _graph(bins=("tool",))
    bin_error = _error(1, kind="bin", name="tool")
    told = _run(_built(), bin_error, _failed('bin "tool"'))
    assert _lines(told, graph) == ([1], True)
    harness_only = _run(_built(), bin_error, _failed('bin "tool" test'))
    assert _lines(harness_only, graph) == ([], False)
    # cargo never builds a binary whose library failed; nor does `cargo check`.
    assert _lines(_run(_error(2), _failed("lib")), graph) == ([2], True)


def test_what_a_check_may_not_say_or_cargo_did_not_name_leaves_it_unknown() -> None:
    # Constant evaluation (may come from code generation), an error with no place.
    assert _lines(_run(_error(2, "E0080"), _failed("lib"))) == ([], False)
    assert _lines(_run(_error(2, "none"), _failed("lib"))) == ([], False)
    # A unit's description this module does not know.
    assert _lines(_run(_error(2), _failed("lib"), _failed("lib fuzz"))) == ([], False)
    # An integration test's failure is no unit of the crate's own code.
    assert _lines(_run(_built(), _failed('test "it"'))) == ([], True)


def test_a_crate_whose_tests_may_turn_on_its_own_features_is_never_told() -> None:
    assert _lines(_run(_error(2), _failed("lib")), _graph(dev_paths=True)) == ([], False)


def test_a_build_that_did_not_end_tells_nothing() -> None:
    assert plain_errors(_error(2) + "\n" + _failed("lib"), _graph(), ["lc"]) is None


def test_the_plain_units_built_are_told_as_the_lines_come() -> None:
    # head_early stops HEAD's check once this says True: the library and the binary built
    # for use; their test harnesses' artifacts (profile.test) are not theirs.
    watch = PlainBuilds(_graph(bins=("tool",)), ["lc"])
    assert not watch.line(b"   Compiling lc v0.1.0 (/p)")
    assert not watch.line(_built("lib", test=True).encode())
    assert not watch.line(_built("lib").encode())
    assert not watch.line(_built("bin", test=True, name="tool").encode())
    assert not watch.line(_error(3, kind="bin", name="tool").encode())
    assert watch.line(_built("bin", name="tool").encode())
