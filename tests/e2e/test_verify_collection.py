"""A collection error raised by the project's own code is red, naming the frame in the
project that raised; the environment failing is `error`. Real pytest on the sample."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.cli.demo_sample import break_sample, build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, RungResult, run_ladder, stop_type_daemon
from git_tree import git as _git

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
async def calc(tmp_path: Path) -> AsyncIterator[Path]:
    root = build_sample(tmp_path / "calc")
    yield root
    await stop_type_daemon(root)


async def _scoped(root: Path, **request: object) -> RungResult:
    ladder = LadderRequest.model_validate({"rungs": ["test.scoped"], **request})
    result = await run_ladder(root, ladder, bus=InMemoryEventBus(str(root)))
    (only,) = result.rungs
    return only


def _raised_in_report(result: RungResult) -> None:
    assert result.state == "red", result
    (diag,) = result.diagnostics
    assert (diag.file, diag.line, diag.code) == ("src/calc/report.py", 5, "ValueError")
    assert "invalid literal for int()" in diag.message
    assert "raised at src/calc/report.py:5" in diag.message
    assert result.reason is not None
    assert result.reason.startswith("1 collection error(s), first ")


async def test_a_module_level_error_in_a_changed_file_is_red_at_its_frame(calc: Path) -> None:
    break_sample(calc, "import")
    _raised_in_report(await _scoped(calc))


async def test_a_collection_error_of_tests_named_by_node_id_is_red_not_error(calc: Path) -> None:
    # Node ids (as recorded selection gives them) make pytest exit 4, not 2.
    break_sample(calc, "import")
    _raised_in_report(await _scoped(calc, filter=["tests/test_report.py::test_total"]))


async def test_a_conftest_importing_the_broken_module_is_red_at_its_frame(calc: Path) -> None:
    conftest = calc / "tests" / "conftest.py"
    conftest.write_text("from calc import report  # noqa: F401\n", encoding="utf-8")
    _git(calc, "commit", "-qam", "the conftest imports the report")
    break_sample(calc, "import")
    result = await _scoped(calc)
    assert result.exit_code == 4
    _raised_in_report(result)
    assert "tests/conftest.py: collection error: ValueError" in result.diagnostics[0].message


async def test_a_conftest_importing_a_package_not_installed_is_an_environment_error(
    calc: Path,
) -> None:
    conftest = calc / "tests" / "conftest.py"
    conftest.write_text("import habitat_not_installed_anywhere\n", encoding="utf-8")
    result = await _scoped(calc)
    assert (result.state, result.exit_code) == ("error", 4), result
    assert result.reason is not None
    assert "No module named 'habitat_not_installed_anywhere'" in result.reason
