"""The warm pytest (verify/rungs/warm_pytest.py): a test run forked from an interpreter that
has imported pytest reports what a fresh `python -m pytest` reports, sees the run's own
environment, folder and path, ends with its run, and is fresh — saying why — where the
warm one could not be faithful."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import psutil
import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.proc import is_alive
from agent_habitat.testing import eventually
from agent_habitat.verify import LadderRequest, stop_type_daemon
from agent_habitat.verify.models import RungResult
from agent_habitat.verify.rungs.warm_pytest import WarmPytest
from agent_habitat.verify.runner.config import RunnerConfig
from agent_habitat.verify.runner.runner import VerifyRunner
from agent_habitat.workspace import Workspace
from git_tree import commit_tree
from ladder_runs import climb_one
from project_venv import interpreter

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CORE = "def double(x: int) -> int:\n    return x * 2\n"
SEEN = """\
import json
import os
import pathlib
import sys
import tempfile

from shop.core import double


def test_sees_the_run() -> None:
    seen = {
        "path": [p.split("/substrates/")[0] for p in sys.path],  # a run's own folder there
        "argv0": os.path.basename(sys.argv[0]),
        "orig_argv": [a for a in sys.orig_argv[1:] if not a.startswith("--junitxml=")],
        "main": os.path.basename(getattr(sys.modules["__main__"], "__file__", "")),
        "cwd": os.getcwd(),
        "tmp_is_tmpdir": tempfile.gettempdir() == os.environ["TMPDIR"],
        "substrate_plugin_loaded": "habitat_substrate_plugin" in sys.modules,
        "extra": os.environ.get("WARM_EXTRA"),
        "pid": os.getpid(),
    }
    out = pathlib.Path(os.environ["DUMP_DIR"]) / f"{os.getpid()}.json"
    out.write_text(json.dumps(seen))


def test_fails() -> None:  # once the change breaks double (_break): red for the change
    assert double(2) == 4
"""
HOLDS = """\
import os
import pathlib
import subprocess
import sys
import time


def test_holds_a_daemon() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True
    )
    pids = pathlib.Path(os.environ["DUMP_DIR"], "pids")  # whole or absent: a reader polls it
    pids.with_suffix(".part").write_text(f"{os.getpid()} {child.pid}")
    os.replace(pids.with_suffix(".part"), pids)
    release = pathlib.Path(os.environ["DUMP_DIR"], "release")
    deadline = time.monotonic() + 120
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
"""


def _shop(root: Path, python: str) -> Path:
    commit_tree(
        root,
        {
            "shop/__init__.py": "",
            "shop/core.py": CORE,
            "tests/test_seen.py": SEEN,
            ".gitignore": "__pycache__/\n.pytest_cache/\n",
            "pyproject.toml": '[project]\nname = "shop"\nversion = "0"\n\n'
            f"[tool.habitat.ladder]\npython = {python!r}\n",
        },
    )
    return root


def _break(root: Path) -> None:
    """The change: double breaks, and test_fails, which passes at HEAD, fails."""
    (root / "shop/core.py").write_text(CORE.replace("x * 2", "x * 3"), encoding="utf-8")


@pytest.fixture
def dumps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "dumps"
    folder.mkdir()
    monkeypatch.setenv("DUMP_DIR", str(folder))
    return folder


@pytest.fixture
async def shop(tmp_path: Path) -> AsyncIterator[Path]:
    root = _shop(tmp_path / "shop", sys.executable)
    yield root
    await stop_type_daemon(root)


@pytest.fixture
async def runner(shop: Path) -> AsyncIterator[VerifyRunner]:
    bus = InMemoryEventBus(str(shop))
    async with VerifyRunner.open(shop, bus=bus, config=RunnerConfig(coalesce_seconds=0)) as r:
        yield r


async def _scoped(runner: VerifyRunner, target: str = "tests/test_seen.py") -> RungResult:
    ticket = await runner.request(LadderRequest(rungs=["test.scoped"], filter=[target]), wait=True)
    assert ticket.result is not None
    assert ticket.result.result is not None
    (rung,) = ticket.result.result.rungs
    return rung


def _note(rung: RungResult) -> str:
    return next((n for n in rung.notes if "pytest" in n), "")


def _seen(dumps: Path) -> list[dict[str, object]]:
    found = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(dumps.glob("*.json"))]
    for p in dumps.glob("*.json"):
        p.unlink()
    return found


async def test_a_warm_run_reports_and_sees_what_a_fresh_run_does(
    runner: VerifyRunner, shop: Path, dumps: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WARM_EXTRA", "set after the warm pytest started")
    _break(shop)
    warm = await _scoped(runner)
    assert "forked from the warm pytest" in _note(warm), warm.notes
    (warm_seen,) = _seen(dumps)
    monkeypatch.setenv("HABITAT_LADDER_WARM_PYTEST", "false")
    fresh = await _scoped(runner)
    assert "warm" not in " ".join(fresh.notes), fresh.notes
    (fresh_seen,) = _seen(dumps)

    assert warm.state == fresh.state == "red"
    assert warm.exit_code == fresh.exit_code == 1
    assert [(d.file, d.message) for d in warm.diagnostics] == [
        (d.file, d.message) for d in fresh.diagnostics
    ]
    assert warm.reason == fresh.reason
    assert warm_seen.pop("pid") != fresh_seen.pop("pid")
    assert warm_seen == fresh_seen
    assert warm_seen["cwd"] == str(shop)
    assert str(shop) in warm_seen["path"]  # type: ignore[operator]
    assert warm_seen["argv0"] == warm_seen["main"] == "__main__.py"
    assert warm_seen["tmp_is_tmpdir"] is True
    assert warm_seen["substrate_plugin_loaded"] is True
    assert warm_seen["extra"] == "set after the warm pytest started"


async def test_an_interpreter_variable_that_differs_makes_the_run_fresh(
    runner: VerifyRunner, shop: Path, dumps: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _break(shop)
    first = await _scoped(runner)
    assert "forked from the warm pytest" in _note(first)
    monkeypatch.setenv("PYTHONHASHSEED", "7")
    second = await _scoped(runner)
    assert _note(second).endswith(
        "pytest ran fresh: PYTHONHASHSEED differs from the warm pytest's; it is read at "
        "interpreter start"
    ), second.notes
    assert second.state == first.state == "red"


async def test_a_sitecustomize_on_the_runs_path_makes_the_run_fresh(
    runner: VerifyRunner, tmp_path: Path, dumps: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _scoped(runner)  # the warm pytest is up
    custom = tmp_path / "custom"
    custom.mkdir()
    (custom / "sitecustomize.py").write_text(
        "import os, pathlib\n"
        "pathlib.Path(os.environ['DUMP_DIR'], 'customized').write_text('yes')\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PYTHONPATH", str(custom))
    rung = await _scoped(runner)
    assert _note(rung).endswith(
        f"pytest ran fresh: sitecustomize.py on PYTHONPATH ({custom}) runs at interpreter start"
    ), rung.notes
    assert (dumps / "customized").read_text(encoding="utf-8") == "yes"


async def test_a_cancelled_warm_run_leaves_nothing_running(
    runner: VerifyRunner, shop: Path, dumps: Path
) -> None:
    (shop / "tests/test_holds.py").write_text(HOLDS, encoding="utf-8")
    await _scoped(runner)  # the warm pytest is up
    ticket = await runner.request(
        LadderRequest(rungs=["test.scoped"], filter=["tests/test_holds.py"])
    )
    await eventually(lambda: (dumps / "pids").exists(), within=60)
    test_pid, daemon_pid = map(int, (dumps / "pids").read_text(encoding="utf-8").split())
    procs = [psutil.Process(test_pid), psutil.Process(daemon_pid)]
    zygote = WarmPytest(Workspace.for_project(shop)).record()
    assert zygote is not None
    assert psutil.Process(test_pid).ppid() != zygote.pid  # forked by a waiter, not by it
    await runner.cancel(ticket.task)
    await runner.wait(ticket.task)
    _, alive = psutil.wait_procs(procs, timeout=30)
    assert not alive, [p.cmdline() for p in alive]
    assert is_alive(zygote), "cancelling a run does not stop the warm pytest"


def _purelib(venv: Path) -> Path:
    return Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))


def _venv(tmp_path: Path) -> tuple[Path, Path]:
    """(its interpreter, its site-packages): a venv of its own whose site-packages reaches
    pytest through a .pth file, so "installing" a package is writing into that folder. The
    pytest it reaches is the projects' venv's (pytest alone, tests/project_venv.py), once
    built, else this one's (with the dev venv's plugins)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = _purelib(venv)
    pytest_site = _purelib(Path(interpreter()).parent.parent)
    (site / "habitat-test.pth").write_text(f"{pytest_site}\n", encoding="utf-8")
    return venv / "bin/python", site


@asynccontextmanager
async def _runner_on(root: Path) -> AsyncIterator[VerifyRunner]:
    bus = InMemoryEventBus(str(root))
    try:
        async with VerifyRunner.open(root, bus=bus, config=RunnerConfig(coalesce_seconds=0)) as r:
            yield r
    finally:
        await stop_type_daemon(root)


@pytest.mark.usefixtures("own_interpreter")
async def test_a_package_installed_since_it_started_makes_the_run_fresh_and_restarts_it(
    tmp_path: Path, dumps: Path
) -> None:
    python, site = _venv(tmp_path)
    root = _shop(tmp_path / "shop", str(python))
    workspace = Workspace.for_project(root)
    _break(root)
    async with _runner_on(root) as runner:
        first = await _scoped(runner)
        assert "forked from the warm pytest" in _note(first), first.notes
        before = WarmPytest(workspace).record()
        assert before is not None
        (site / "newly_installed.py").write_text("", encoding="utf-8")
        second = await _scoped(runner)
        assert "pytest ran fresh: " in _note(second), second.notes
        assert "changed since the warm pytest started; it starts anew" in _note(second)
        assert second.state == first.state == "red"
        await eventually(lambda: not is_alive(before), within=10)
        third = await _scoped(runner)
        assert "forked from the warm pytest" in _note(third), third.notes
        after = WarmPytest(workspace).record()
        assert after is not None
        assert after.pid != before.pid


PLUGIN = """\
import os
import pathlib

pathlib.Path(os.environ["DUMP_DIR"], __name__ + ".imported-by").write_text(str(os.getpid()))
"""


def _entry_point(site: Path, dist: str, module: str) -> None:
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n", "utf-8")
    (info / "entry_points.txt").write_text(f"[pytest11]\n{dist} = {module}\n", "utf-8")


@pytest.mark.usefixtures("own_interpreter")
async def test_installed_plugins_are_imported_warm_and_the_projects_own_in_each_run(
    tmp_path: Path, dumps: Path
) -> None:
    python, site = _venv(tmp_path)
    root = _shop(tmp_path / "shop", str(python))
    # One plugin installed in site-packages, one that lives in the project (as an editable
    # install of a pytest plugin puts it): that one is the project's code, never warm.
    (site / "installed_plugin.py").write_text(PLUGIN, encoding="utf-8")
    _entry_point(site, "installed-plugin", "installed_plugin")
    (root / "own_plugin.py").write_text(PLUGIN, encoding="utf-8")
    (site / "own-plugin.pth").write_text(f"{root}\n", encoding="utf-8")
    _entry_point(site, "own-plugin", "own_plugin")
    async with _runner_on(root) as runner:
        rung = await _scoped(runner)
        assert "forked from the warm pytest" in _note(rung), rung.notes
        zygote = WarmPytest(Workspace.for_project(root)).record()
        assert zygote is not None
        (seen,) = _seen(dumps)
        by = {p.name: int(p.read_text(encoding="utf-8")) for p in dumps.glob("*.imported-by")}
        assert by["installed_plugin.imported-by"] == zygote.pid
        assert by["own_plugin.imported-by"] not in (zygote.pid, None)
        assert by["own_plugin.imported-by"] == seen["pid"]


async def test_a_one_shot_climb_starts_no_warm_pytest(shop: Path, dumps: Path) -> None:
    _break(shop)
    result = await climb_one(shop, "test.scoped")
    assert result.state == "red", result
    assert not any("warm" in note for note in result.notes), result.notes
    assert WarmPytest(Workspace.for_project(shop)).record() is None


async def test_the_ci_parity_policy_runs_pytest_fresh(runner: VerifyRunner, dumps: Path) -> None:
    await _scoped(runner)  # the warm pytest is up
    ticket = await runner.request(LadderRequest(policy="ci_parity", rungs=["test.full"]), wait=True)
    assert ticket.result is not None
    assert ticket.result.result is not None
    (rung,) = ticket.result.result.rungs
    assert any(
        "pytest ran fresh: the ci_parity policy runs pytest as CI does" in n for n in rung.notes
    ), rung.notes
