"""What the ladder's own test runs would write into the project (pytest-cov's data file and
reports, a `--junitxml` the project's addopts asks for) never lands there, so the verified
snapshot is still the tree's after the run: the verdict is not stale and the next verify
does not re-run for nothing. Real pytest and pytest-cov on the sample."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, run_ladder, stop_type_daemon
from agent_habitat.verify.toolchains import snapshot_of
from git_tree import git as _git

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

_WRITES = "--cov=calc --cov-report=xml --cov-report=html --cov-fail-under=100 --junitxml=junit.xml"


@pytest.fixture
async def calc(tmp_path: Path, own_interpreter: None) -> AsyncIterator[Path]:
    # The habitat's interpreter, the dev venv: the project measures coverage (pytest-cov).
    pytest.importorskip("pytest_cov")
    root = build_sample(tmp_path / "calc")
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace(
            'addopts = "-p no:cacheprovider"', f'addopts = "-p no:cacheprovider {_WRITES}"'
        ),
        encoding="utf-8",
    )
    _git(root, "commit", "-qam", "the project measures coverage and writes a junit report")
    yield root
    await stop_type_daemon(root)


def _written(root: Path) -> list[str]:
    names = (".coverage", "coverage.xml", "htmlcov", "junit.xml")
    return sorted(
        p.name for p in root.iterdir() if p.name in names or p.name.startswith(".coverage.")
    )


@pytest.mark.parametrize("rung", ["test.full", "test.scoped"])
async def test_a_test_run_leaves_no_file_of_its_own_in_the_project(calc: Path, rung: str) -> None:
    (calc / "src/calc/text.py").write_text(
        # code, not a comment: a comment-only edit runs no test (verify/select/selection.py)
        (calc / "src/calc/text.py").read_text(encoding="utf-8") + "\nA_USERS_EDIT = 1\n",
        encoding="utf-8",
    )
    ladder = LadderRequest.model_validate({"rungs": [rung]})
    result = await run_ladder(calc, ladder, bus=InMemoryEventBus(str(calc)))
    (only,) = result.rungs
    # The run measured nothing for coverage: a subset's coverage under a project's
    # --cov-fail-under is not the change's failure.
    assert only.state == "green", only
    assert _written(calc) == []
    after = snapshot_of(calc)
    assert after.id == result.snapshot, after.touched
    assert after.touched == ["src/calc/text.py"]
