"""The toolchain seam: one rung for every detected toolchain with work, merged; one
toolchain's result as it made it; a configured command over every toolchain; the
detected toolchains' output folders never part of the change."""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.layout import Layout
from agent_habitat.verify.models import Diagnostic, RungName, RungResult, RungState, Selection
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.runner.watch import GitIgnore
from agent_habitat.verify.snapshot import Snapshot
from agent_habitat.verify.toolchains import (
    TOOLCHAINS,
    Rung,
    Toolchain,
    detected,
    ignored_dirs,
    snapshot_of,
)
from agent_habitat.verify.toolchains.climb import impact_files, run_rung
from agent_habitat.verify.toolchains.python import PYTHON
from agent_habitat.workspace import Workspace

pytestmark = pytest.mark.anyio

TOUCHED = ["src/app.py", "cmd/main.go", "README.md"]


def _ctx(tmp_path: Path, touched: list[str], config: LadderConfig | None = None) -> RungContext:
    return RungContext(
        root=tmp_path,
        workspace=Workspace.for_project(tmp_path),
        config=config or LadderConfig(),
        policy="standard",
        ladder_id="v1",
        snapshot=Snapshot(id="s", head=None, hashes=dict.fromkeys(touched, "x")),
        touched=list(touched),
        layout=Layout(root=tmp_path, packages={}, test_roots=[], is_python=False),
        env=None,
    )


class Fake:
    """A toolchain whose rungs record what they were given and answer `state`."""

    def __init__(
        self, name: str, suffix: str, state: RungState, ignores: tuple[str, ...] = ()
    ) -> None:
        self.name, self.state = name, state
        self.seen: list[tuple[RungName, str, list[str], str]] = []
        self.chain = Toolchain(
            name=name,
            detect=lambda root: (root / f"{suffix}.marker").exists(),
            owns=lambda rel: rel.endswith(suffix),
            runners={"diagnose.files": self._rung("diagnose.files")},
            ignores=ignores,
        )

    def _rung(self, rung: RungName) -> Rung:
        async def run(ctx: RungContext) -> RungResult:
            self.seen.append((rung, ctx.toolchain, list(ctx.touched), ctx.spool(rung).name))
            return RungResult(
                rung=rung,
                task=ctx.task(rung),
                state=self.state,
                reason=f"{self.name} says {self.state}",
                tool=f"{self.name}-lint",
                duration_s=1.5,
                command=[f"{self.name}-lint"],
                diagnostics=[Diagnostic(file=ctx.touched[0], message=f"{self.name} finding")],
                notes=[f"ran {self.name}-lint"],
            )

        return run


async def test_one_toolchain_gets_the_whole_change_and_its_result_is_unchanged(
    tmp_path: Path,
) -> None:
    py = Fake("python", ".py", "red")
    ctx = _ctx(tmp_path, TOUCHED)
    result = await run_rung(ctx, "diagnose.files", [py.chain], py.chain)
    assert py.seen == [("diagnose.files", "python", TOUCHED, "verify-v1.diagnose.files.out")]
    assert (result.state, result.reason, result.tool) == ("red", "python says red", "python-lint")
    assert result.notes == ["ran python-lint"]
    assert result.duration_s == 1.5


async def test_several_toolchains_each_get_their_files_and_the_unowned_ones(
    tmp_path: Path,
) -> None:
    py, go = Fake("python", ".py", "green"), Fake("go", ".go", "red")
    ctx = _ctx(tmp_path, TOUCHED)
    result = await run_rung(ctx, "diagnose.files", [py.chain, go.chain], py.chain)
    assert py.seen == [
        (
            "diagnose.files",
            "python",
            ["src/app.py", "README.md"],
            "verify-v1.diagnose.files.python.out",
        )
    ]
    assert go.seen == [
        ("diagnose.files", "go", ["cmd/main.go", "README.md"], "verify-v1.diagnose.files.go.out")
    ]
    # The worst state wins and its command stands for the rung; the rest is each one's.
    assert (result.state, result.command) == ("red", ["go-lint"])
    assert result.reason == "python: python says green; go: go says red"
    assert result.tool == "python python-lint, go go-lint"
    assert result.notes == ["python: ran python-lint", "go: ran go-lint"]
    assert [d.message for d in result.diagnostics] == ["python finding", "go finding"]
    assert result.duration_s == 3.0
    assert ctx.touched == TOUCHED  # the climb's own context is not narrowed


@pytest.mark.parametrize(
    ("states", "worst"),
    [
        (("green", "skipped"), "green"),
        (("skipped", "skipped"), "skipped"),
        (("error", "green"), "error"),
        (("died", "red"), "died"),
        (("red", "error"), "red"),
    ],
)
async def test_the_worst_state_wins(
    tmp_path: Path, states: tuple[RungState, RungState], worst: RungState
) -> None:
    py, go = Fake("python", ".py", states[0]), Fake("go", ".go", states[1])
    result = await run_rung(
        _ctx(tmp_path, TOUCHED), "diagnose.files", [py.chain, go.chain], py.chain
    )
    assert result.state == worst


async def test_a_toolchain_without_work_in_the_change_does_not_run(tmp_path: Path) -> None:
    py, go = Fake("python", ".py", "green"), Fake("go", ".go", "red")
    result = await run_rung(
        _ctx(tmp_path, ["src/app.py"]), "diagnose.files", [py.chain, go.chain], py.chain
    )
    assert go.seen == []
    assert (result.state, result.notes) == ("green", ["python: ran python-lint"])


async def test_a_rung_a_toolchain_lacks_is_skipped_saying_so(tmp_path: Path) -> None:
    py, go = Fake("python", ".py", "green"), Fake("go", ".go", "red")
    result = await run_rung(_ctx(tmp_path, TOUCHED), "test.full", [py.chain, go.chain], py.chain)
    assert result.state == "skipped"
    assert result.reason == (
        "python: the python toolchain has no test.full rung; "
        "go: the go toolchain has no test.full rung"
    )


async def test_a_configured_command_runs_once_over_every_toolchain(tmp_path: Path) -> None:
    py, go = Fake("python", ".py", "green"), Fake("go", ".go", "red")
    config = LadderConfig.model_validate({"diagnose.files": "true"})
    ctx = _ctx(tmp_path, TOUCHED, config)
    result = await run_rung(ctx, "diagnose.files", [py.chain, go.chain], py.chain)
    assert go.seen == []
    assert py.seen == [("diagnose.files", "python", TOUCHED, "verify-v1.diagnose.files.out")]
    assert result.state == "green"


def test_python_is_registered_and_detected_from_its_layout(tmp_path: Path) -> None:
    assert TOOLCHAINS["python"] is PYTHON
    assert detected(tmp_path) == []
    (tmp_path / "setup.py").write_text("", encoding="utf-8")
    assert detected(tmp_path) == [PYTHON]
    assert detected(tmp_path, {"python": False}) == []
    assert PYTHON.owns("src/a.py")
    assert PYTHON.owns("pyproject.toml")
    assert not PYTHON.owns("web/app.ts")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_a_detected_toolchains_output_folders_are_never_the_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = Fake("node", ".js", "green", ignores=("node_modules",))
    monkeypatch.setitem(TOOLCHAINS, "node", node.chain)
    _git(tmp_path, "init", "-q")
    (tmp_path / "node_modules/dep").mkdir(parents=True)
    (tmp_path / "node_modules/dep/index.js").write_text("x", encoding="utf-8")
    (tmp_path / "app.js").write_text("x", encoding="utf-8")
    assert ignored_dirs(tmp_path) == frozenset()
    assert "node_modules/dep/index.js" in snapshot_of(tmp_path).touched
    (tmp_path / ".js.marker").write_text("", encoding="utf-8")
    assert ignored_dirs(tmp_path) == {"node_modules"}
    assert snapshot_of(tmp_path).touched == [".js.marker", "app.js"]
    relevant: Callable[[list[str]], list[str]] = GitIgnore(tmp_path).relevant
    assert relevant(["app.js", "node_modules/dep/index.js"]) == ["app.js"]


def test_a_build_caches_marker_is_never_the_change(tmp_path: Path) -> None:
    # cargo's first build writes target/CACHEDIR.TAG into a temp folder, then renames it.
    _git(tmp_path, "init", "-q")
    (tmp_path / "target7lgugf").mkdir()
    (tmp_path / "target7lgugf/CACHEDIR.TAG").write_text("Signature: x", encoding="utf-8")
    assert GitIgnore(tmp_path).relevant(["target7lgugf/CACHEDIR.TAG", "src/lib.rs"]) == [
        "src/lib.rs"
    ]


def test_pythons_impact_looks_at_its_share_of_the_change_when_several_climb() -> None:
    py, go = Fake("python", ".py", "green"), Fake("go", ".go", "green")
    assert impact_files(TOUCHED, [py.chain]) == TOUCHED
    assert impact_files(TOUCHED, [go.chain]) == TOUCHED  # no Python: the graph says so itself
    assert impact_files(TOUCHED, [py.chain, go.chain]) == ["src/app.py", "README.md"]
    assert impact_files(["cmd/main.go"], [py.chain, go.chain]) == []


async def test_a_toolchain_that_chooses_its_tests_adds_them_to_the_climbs_selection(
    tmp_path: Path,
) -> None:
    go = Fake("go", ".go", "green")
    chosen = go.chain.runners["diagnose.files"]

    async def choosing(ctx: RungContext) -> RungResult:
        ctx.selection = Selection(full=False, tests=["cmd"], reasons=["cmd is touched"])
        return await chosen(ctx)

    go.chain = dataclasses.replace(go.chain, runners={"diagnose.files": choosing})
    py = Fake("python", ".py", "green")
    ctx = _ctx(tmp_path, TOUCHED)
    ctx.selection = Selection(full=False, tests=["tests/test_app.py"], reasons=["py reason"])
    await run_rung(ctx, "diagnose.files", [py.chain, go.chain], py.chain)
    assert ctx.selection == Selection(
        full=False, tests=["tests/test_app.py", "cmd"], reasons=["py reason", "cmd is touched"]
    )
