"""A project that configures pyright, on a machine without pyright: the habitat's basedpyright
stands in (real, from the dev install), or one is fetched into the habitat's tools folder
(through real pip and venv, from a local wheel: the package index is the one seam)."""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path

import anyio
import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.habitat import Habitat
from agent_habitat.trust import ProjectTrust
from agent_habitat.verify import LadderRequest, LadderResult, run_ladder
from agent_habitat.verify.rungs import pyright_tools
from agent_habitat.verify.runner.warmup import warm_lines
from agent_habitat.workspace import Workspace
from git_tree import commit_tree

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PYPROJECT = """\
[project]
name = "shapes"
version = "0.1"

[tool.pyright]
include = ["shapes"]
"""

MODULE = """\
def area(width: int, height: int) -> int:
    return width * height


def label() -> str:
    return "shape"


def old_mistake() -> int:
    return "this was wrong at HEAD already"
"""


@pytest.fixture
def shapes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    files = {"pyproject.toml": PYPROJECT, "shapes/__init__.py": "", "shapes/core.py": MODULE}
    root = commit_tree(tmp_path / "shapes", files)
    # No pyright anywhere on this machine's PATH.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    return root


async def _compile(root: Path, environ: dict[str, str] | None = None) -> LadderResult:
    request = LadderRequest(rungs=["compile.project"])
    return await run_ladder(root, request, bus=InMemoryEventBus(str(root)), environ=environ)


def _edit(root: Path, old: str, new: str) -> None:
    path = root / "shapes/core.py"
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


async def test_basedpyright_stands_in_for_pyright_and_only_a_new_error_is_red(
    shapes: Path,
) -> None:
    assert (pyright_tools.OWN_BIN / "basedpyright").is_file(), "the dev install brings it"
    _edit(shapes, "return width * height", "return str(width * height)")
    red = await _compile(shapes)
    (rung,) = red.rungs
    assert (rung.tool, rung.state) == ("basedpyright", "red"), rung
    new = [d for d in rung.diagnostics if not d.preexisting]
    assert [(d.file, d.line, d.code) for d in new] == [("shapes/core.py", 2, "reportReturnType")]
    assert rung.preexisting_findings == 1  # old_mistake, listed after the new one
    assert all(d.severity == "error" for d in rung.diagnostics), "errors only when standing in"
    assert any("configures pyright, which is not installed: basedpyright" in n for n in rung.notes)
    assert "--level" in rung.command
    assert any("(the habitat's environment)" in n for n in rung.notes)

    _edit(shapes, "return str(width * height)", "return width * height + 0  # area")
    green = await _compile(shapes)
    (rung,) = green.rungs
    assert (rung.tool, rung.state) == ("basedpyright", "green"), rung
    assert (rung.new_findings, rung.preexisting_findings) == (0, 1)
    assert green.state == "green"


def _fake_wheel(folder: Path) -> Path:
    """A `basedpyright` wheel whose script reports an error on every target line that says
    BAD, in basedpyright's JSON."""
    script = (
        "import json, sys\n"
        "def main():\n"
        "    found = []\n"
        "    for arg in sys.argv[1:]:\n"
        "        if arg.endswith('.py'):\n"
        "            for n, line in enumerate(open(arg, encoding='utf-8')):\n"
        "                if 'BAD' in line:\n"
        "                    found.append({'file': arg, 'severity': 'error', 'rule': 'reportX',\n"
        "                        'message': 'bad: ' + line.strip(),\n"
        "                        'range': {'start': {'line': n, 'character': 0}}})\n"
        "    print(json.dumps({'generalDiagnostics': found}))\n"
        "    sys.exit(1 if found else 0)\n"
    )
    files = {
        "basedpyright/__init__.py": script,
        "basedpyright-99.0.dist-info/METADATA": (
            "Metadata-Version: 2.1\nName: basedpyright\nVersion: 99.0\n"
        ),
        "basedpyright-99.0.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        "basedpyright-99.0.dist-info/entry_points.txt": (
            "[console_scripts]\nbasedpyright = basedpyright:main\n"
        ),
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append("basedpyright-99.0.dist-info/RECORD,,")
    files["basedpyright-99.0.dist-info/RECORD"] = "\n".join(record) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / "basedpyright-99.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


async def test_without_any_pyright_the_habitat_fetches_basedpyright_once_into_its_tools(
    shapes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, habitat_home: Path
) -> None:
    monkeypatch.setattr(pyright_tools, "OWN_BIN", tmp_path / "no-such-bin")
    monkeypatch.setenv("HABITAT_LADDER_FETCH_CHECKERS", "true")
    # The project's interpreter is the base one the habitat's venv was made from (the venv
    # itself has basedpyright).
    system = {"HABITAT_LADDER_PYTHON": str(Path(sys.base_prefix) / "bin" / "python3")}
    index = tmp_path / "index"
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))

    # An index without the package: the fetch fails, and the rung says what to install.
    index.mkdir()
    _edit(shapes, "return width * height", "return width * height + 0  # BAD")
    failed = await _compile(shapes, system)
    (rung,) = failed.rungs
    assert rung.state == "skipped", rung
    assert rung.reason is not None
    assert "fetching basedpyright failed" in rung.reason
    assert "pip install" in rung.reason
    assert rung.missing is not None
    assert "pip install pyright" in rung.missing
    assert failed.state == "incomplete"
    assert not (pyright_tools.tools_venv() / "bin" / "basedpyright").exists()

    # Within the hour, a verify says the fetch failed instead of trying again.
    _fake_wheel(index)
    again = await _compile(shapes, system)
    (rung,) = again.rungs
    assert rung.state == "skipped", rung
    assert rung.reason is not None
    assert "an earlier fetch failed" in rung.reason
    assert "No matching distribution" in rung.reason or "Could not find" in rung.reason

    monkeypatch.setattr(pyright_tools, "RETRY_AFTER_S", 0.0)
    fetched = await _compile(shapes, system)
    (rung,) = fetched.rungs
    assert (rung.tool, rung.state) == ("basedpyright", "red"), rung
    assert rung.command[0] == str(pyright_tools.tools_venv() / "bin" / "basedpyright")
    assert str(habitat_home) in rung.command[0]
    assert [d.message for d in rung.diagnostics] == ["bad: return width * height + 0  # BAD"]
    assert any(n.startswith("fetched basedpyright into") for n in rung.notes), rung.notes
    assert not (shapes / ".venv").exists(), "nothing is installed into the project"
    # The habitat's own pip filled it: no ensurepip, no pip of its own in the tools venv.
    assert not list(pyright_tools.tools_venv().glob("lib/python*/site-packages/pip"))

    # The next climb reuses the fetched one (the index could be gone by now).
    (index / "basedpyright-99.0-py3-none-any.whl").unlink()
    _edit(shapes, "  # BAD", "  # fine")
    reused = await _compile(shapes, system)
    (rung,) = reused.rungs
    assert (rung.tool, rung.state) == ("basedpyright", "green"), rung
    assert not any(n.startswith("fetched") for n in rung.notes)


async def test_the_warm_up_fetches_the_checker_so_the_first_verify_does_not(
    shapes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pyright_tools, "OWN_BIN", tmp_path / "no-such-bin")
    monkeypatch.setenv("HABITAT_LADDER_PYTHON", str(Path(sys.base_prefix) / "bin" / "python3"))
    monkeypatch.setenv("HABITAT_LADDER_FETCH_CHECKERS", "true")
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "true")
    monkeypatch.setenv("HABITAT_COALESCE_SECONDS", "0")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "index"))
    _fake_wheel(tmp_path / "index")
    ProjectTrust().grant_sync(shapes, "verb")  # the warm-up runs only a trusted project's code
    workspace = Workspace.for_project(shapes)
    async with Habitat.open(workspace, project=shapes) as habitat:
        warm, runner = habitat.verifier.warmup, habitat.verify
        assert warm is not None
        assert runner is not None
        with anyio.fail_after(180):
            await warm.wait()
        item = warm.items["type_daemon"]
        assert item.state == "warm", warm.items
        assert "basedpyright at hand (fetched into" in item.detail
        _edit(shapes, "return width * height", "return width * height + 0  # BAD")
        with anyio.fail_after(180):
            ticket = await runner.request(LadderRequest(rungs=["compile.project"]), wait=True)
        assert ticket.result is not None
        assert ticket.result.result is not None
        (rung,) = ticket.result.result.rungs
        assert (rung.tool, rung.state) == ("basedpyright", "red"), rung
        assert not any(n.startswith("fetched") for n in rung.notes), rung.notes
    assert any("warm: type daemon: warm — basedpyright" in ln for ln in warm_lines(workspace))


def test_an_interpreter_without_pip_makes_the_tools_venv_with_pip_and_runs_that(
    tmp_path: Path,
) -> None:
    venv = tmp_path / "basedpyright"
    python = str(venv / "bin" / "python")
    made, install = pyright_tools.fetch_steps(venv, own_pip=False)
    assert made == [sys.executable, "-m", "venv", str(venv)]
    assert install == [python, "-m", "pip", "install", "--quiet", "basedpyright"]
    made, install = pyright_tools.fetch_steps(venv, own_pip=True)
    assert made == [sys.executable, "-m", "venv", "--without-pip", str(venv)]
    assert install[:5] == [sys.executable, "-m", "pip", "--python", python]
