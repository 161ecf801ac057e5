"""Red means the change did it, for Python tests: a pytest test that already fails at HEAD
and still fails is listed as already failing at HEAD, not red; a test the change broke is
red next to it. Real pytest, run on HEAD's export for the failed node ids."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, RungName, RungResult, run_ladder, stop_type_daemon
from agent_habitat.workspace import Workspace
from git_tree import IGNORED, commit_tree, ladder_pyproject
from git_tree import git as _git
from git_tree import write as _write

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CORE = """def double(x: int) -> int:
    return x * 2


def half(x: int) -> int:
    return x // 3  # an old bug test_old has caught since before HEAD
"""
TESTS = """from shop.core import double, half


def test_old() -> None:
    assert half(6) == 3


def test_new() -> None:
    assert double(2) == 4
"""


@pytest.fixture
async def shop(tmp_path: Path) -> AsyncIterator[Path]:
    files = {"shop/__init__.py": "", "shop/core.py": CORE, "tests/test_core.py": TESTS}
    root = commit_tree(
        tmp_path / "shop",
        files | {".gitignore": IGNORED, "pyproject.toml": ladder_pyproject("shop")},
        "HEAD, with test_old failing",
    )
    yield root
    await stop_type_daemon(root)


async def _rung(root: Path, rung: RungName) -> RungResult:
    result = await run_ladder(root, LadderRequest(rungs=[rung]), bus=InMemoryEventBus("t"))
    (only,) = result.rungs
    return only


def _failures(result: RungResult) -> list[tuple[str, bool]]:
    return [(d.message.split(": ", 1)[0], d.preexisting) for d in result.diagnostics]


@pytest.mark.parametrize("rung", ["test.full", "test.scoped"])
async def test_a_test_failing_at_head_is_listed_and_the_broken_one_is_red(
    shop: Path, rung: RungName
) -> None:
    core = shop / "shop" / "core.py"
    core.write_text(CORE.replace("x * 2", "x * 3"), encoding="utf-8")
    result = await _rung(shop, rung)
    assert result.state == "red", result
    assert _failures(result) == [
        ("tests/test_core.py::test_new", False),
        ("tests/test_core.py::test_old", True),
    ]
    assert (result.new_findings, result.preexisting_findings) == (1, 1)
    assert result.reason is not None
    assert result.reason.startswith("1 new failure(s) (+1 test(s) already failing at HEAD)")
    assert "test_new" in result.reason


async def test_only_a_test_failing_at_head_is_not_red_and_says_so(shop: Path) -> None:
    core = shop / "shop" / "core.py"
    core.write_text(CORE.replace("x * 2", "2 * x"), encoding="utf-8")
    result = await _rung(shop, "test.scoped")
    assert result.state == "green", result
    assert _failures(result) == [("tests/test_core.py::test_old", True)]
    assert "already failing at HEAD" in (result.reason or "")
    assert result.baseline is not None
    assert result.baseline.startswith("HEAD ")
    again = await _rung(shop, "test.full")  # HEAD's outcome is kept: asked once
    assert again.state == "green", again
    assert again.baseline is not None
    assert again.baseline.endswith("(cached)")


def _head_runs(result: RungResult) -> list[Path]:
    assert result.spool is not None
    return sorted(Path(result.spool).parent.glob("*.head-tests*.out"))


async def test_a_test_recorded_passing_at_head_is_red_without_running_head(shop: Path) -> None:
    clean = await _rung(shop, "test.full")  # a run of HEAD's content records test_new passing
    assert clean.state == "green", clean
    assert _failures(clean) == [("tests/test_core.py::test_old", True)]
    asked = _head_runs(clean)
    assert len(asked) == 1
    core = shop / "shop" / "core.py"
    core.write_text(CORE.replace("x * 2", "x * 3"), encoding="utf-8")
    result = await _rung(shop, "test.full")
    assert result.state == "red", result
    assert _failures(result) == [
        ("tests/test_core.py::test_new", False),
        ("tests/test_core.py::test_old", True),
    ]
    assert _head_runs(result) == asked  # test_old kept, test_new from the record


async def test_a_test_head_does_not_have_is_red(shop: Path) -> None:
    tests = shop / "tests" / "test_core.py"
    tests.write_text(TESTS + "\n\ndef test_added() -> None:\n    assert half(9) == 4\n")
    result = await _rung(shop, "test.full")
    assert result.state == "red", result
    assert _failures(result) == [
        ("tests/test_core.py::test_added", False),
        ("tests/test_core.py::test_old", True),
    ]


async def test_a_collection_error_is_red_even_beside_old_failures(shop: Path) -> None:
    _write(shop, "tests/test_more.py", "import shop.missing\n")
    result = await _rung(shop, "test.full")
    assert result.state == "red", result
    assert any("collection error" in d.message and not d.preexisting for d in result.diagnostics)


async def test_head_runs_with_the_generated_files_git_ignores(tmp_path: Path) -> None:
    # humanize 4.11.0 (hatch-vcs): `src/humanize/_version.py` is written at install and
    # ignored by git, so HEAD's export lacked it; every test failed to import there, "no
    # baseline for the failed tests, each counts as new", and a test that already failed
    # at HEAD was red. The working tree's ignored files (not its ignored folders, such as a
    # venv) are laid over the export, as they are beside HEAD's files in the project.
    root = tmp_path / "shop"
    _write(root, "shop/__init__.py", "from ._version import VERSION as VERSION\n")
    _write(root, "shop/_version.py", "VERSION = '1.0'\n")
    _write(root, "shop/core.py", CORE)
    _write(root, "tests/test_core.py", TESTS)
    _write(root, "shop/cache/blob.bin", "not needed\n")
    ignored = IGNORED + "shop/_version.py\nshop/cache/\n"
    files = {".gitignore": ignored, "pyproject.toml": ladder_pyproject("shop")}
    commit_tree(root, files, "HEAD, with test_old failing")
    try:
        core = root / "shop" / "core.py"
        core.write_text(CORE.replace("x * 2", "x * 3"), encoding="utf-8")
        result = await _rung(root, "test.scoped")
        assert result.state == "red", result
        assert _failures(result) == [
            ("tests/test_core.py::test_new", False),
            ("tests/test_core.py::test_old", True),
        ]
        assert result.baseline is not None
        assert result.baseline.startswith("HEAD "), result.baseline
        export = Workspace.for_project(root).state_dir / "baseline" / "head"
        assert (export / "shop" / "_version.py").is_file()
        assert not (export / "shop" / "cache").exists()  # an ignored folder stays out
    finally:
        await stop_type_daemon(root)


async def test_a_failing_parameter_head_does_not_have_is_new_and_the_rest_compared(
    shop: Path,
) -> None:
    # humanize 4.11.0: an edit of a parametrize value made the failing id
    # `test_intcomma[test_args1-1.000]`, which HEAD does not have; pytest names it without
    # its brackets ("not found: ...::test_intcomma"), so the id was never dropped, HEAD's
    # run failed twice, and every failed test counted as new (test_old included).
    tests = shop / "tests" / "test_core.py"
    tests.write_text(
        TESTS
        + "\n\nimport pytest\n\n\n@pytest.mark.parametrize('x', [5])\n"
        + "def test_param(x: int) -> None:\n    assert double(x) == 11\n",
        encoding="utf-8",
    )
    _git(shop, "commit", "-qam", "a parametrized test that fails at HEAD")
    tests.write_text(tests.read_text(encoding="utf-8").replace("[5]", "[6]"), encoding="utf-8")
    result = await _rung(shop, "test.full")
    assert result.state == "red", result
    assert _failures(result) == [
        ("tests/test_core.py::test_param[6]", False),
        ("tests/test_core.py::test_old", True),
    ]
    assert result.baseline is not None
    assert result.baseline.startswith("HEAD "), result.baseline


@pytest.mark.parametrize(
    ("first", "asked"),
    [
        # An earlier edit elsewhere (`half`): test_new's record ran `double` as it is at
        # HEAD, and passed; so it passes at HEAD, and its failure now is the change's.
        ("(x + 0) // 2", False),
        # An earlier edit of `double` itself: no record ran HEAD's `double`; HEAD is asked.
        ("x * 2 + 0", True),
    ],
)
async def test_a_record_of_an_earlier_edit_answers_for_head_where_it_holds(
    tmp_path: Path, first: str, asked: bool
) -> None:
    core_ok = CORE.replace("x // 3  # an old bug test_old has caught since before HEAD", "x // 2")
    files = {"shop/__init__.py": "", "shop/core.py": core_ok, "tests/test_core.py": TESTS}
    root = commit_tree(
        tmp_path / "shop",
        files | {".gitignore": IGNORED, "pyproject.toml": ladder_pyproject("shop")},
        "HEAD, every test passing",
    )
    try:
        core = root / "shop" / "core.py"
        old = "x // 2" if "//" in first else "x * 2"
        core.write_text(core_ok.replace(old, first), encoding="utf-8")
        earlier = await _rung(root, "test.full")  # records both tests passing, core.py dirty
        assert earlier.state == "green", earlier
        core.write_text(core_ok.replace("x * 2", "x * 3"), encoding="utf-8")
        result = await _rung(root, "test.scoped")
        assert result.state == "red", result
        assert _failures(result) == [("tests/test_core.py::test_new", False)]
        assert result.baseline is not None
        assert result.baseline.startswith("HEAD "), result.baseline
        assert bool(_head_runs(result)) is asked
    finally:
        await stop_type_daemon(root)
