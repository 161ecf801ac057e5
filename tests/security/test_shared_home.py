"""A state folder another user owns, or may write to, is refused on every path (issue 23:
a CLI without a host used a 0777 folder of another user, who swapped `state.db`, and the
victim's next `habitat run` ran their script).

The other user is real: the folders are handed to `nobody` with chown (the suite runs as
root here; without the right to chown the tests skip and say so).
"""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import time
from pathlib import Path

import pytest

from agent_habitat.cli import main
from agent_habitat.workspace import UnsafeStateError, Workspace, habitat_home, write_private

pytestmark = [pytest.mark.timeout(120), pytest.mark.finding("shared-home")]


def _nobody() -> int:
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("no user `nobody` on this machine")


def _give_away(path: Path) -> None:
    uid = _nobody()
    try:
        os.chown(path, uid, -1)
    except PermissionError:
        pytest.skip("this user cannot chown a folder to another user (needs root)")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


def test_a_state_home_another_user_owns_is_refused_naming_it(project: Path) -> None:
    home = habitat_home()
    _give_away(home)
    with pytest.raises(UnsafeStateError, match=rf"the state folder {home} is owned by uid"):
        Workspace.for_project(project).ensure()


def test_habitat_run_refuses_another_user_s_world_writable_state_folder(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = Workspace.for_project(project).ensure()
    _give_away(workspace.state_dir)
    os.chmod(workspace.state_dir, 0o777)
    marker = project / "ran"
    code = main(["run", "--project", str(project), f"touch {marker}"])
    err = capsys.readouterr().err
    assert code != 0
    assert f"the state folder {workspace.state_dir} is owned by uid {_nobody()}" in err
    assert "HABITAT_HOME" in err
    assert not marker.exists()


def test_a_state_db_another_user_swapped_in_is_refused(project: Path) -> None:
    workspace = Workspace.for_project(project).ensure()
    _give_away(workspace.db_path)
    with pytest.raises(UnsafeStateError, match=r"the state file .*state.db is owned by uid"):
        workspace.ensure()


def test_a_sticky_shared_home_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # as /tmp is
    monkeypatch.setenv("HABITAT_HOME", str(shared))
    with pytest.raises(UnsafeStateError, match=rf"chmod 700 {shared}"):
        Workspace.for_project(project).ensure()


def test_habitat_verify_never_follows_a_host_lock_in_another_user_s_state_folder(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lock another user planted, held and naming their socket, is not a host to ask:
    `habitat verify` refuses the folder, naming it, and never connects to the socket."""
    import fcntl
    import json
    import socket

    from agent_habitat.reach.files import HostFiles

    workspace = Workspace.for_project(project).ensure()
    planted = tmp_path / "theirs.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(planted))
    listener.listen(4)
    listener.setblocking(False)
    lock = HostFiles(workspace).lock
    lock.write_text(json.dumps({"pid": os.getpid(), "socket": str(planted)}), encoding="utf-8")
    with open(lock, encoding="utf-8") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # "a host runs"
        _give_away(workspace.state_dir)
        os.chmod(workspace.state_dir, 0o777)
        try:
            code = main(["verify", "--project", str(project), "--policy", "minimal"])
        finally:
            conn: socket.socket | None
            try:
                conn, _ = listener.accept()
            except BlockingIOError:
                conn = None
            listener.close()
    err = capsys.readouterr().err
    assert conn is None, "the CLI connected to the socket the planted lock names"
    assert code != 0
    assert f"the state folder {workspace.state_dir} is owned by uid {_nobody()}" in err


def test_the_folders_a_verify_makes_in_the_state_folder_are_private(tmp_path: Path) -> None:
    """The README says the state's inner folders are 0700; `baseline/` (HEAD's export and
    the base findings) was made by `mkdir(parents=True)`, which gives parents the umask's
    0755, so another user could list what HEAD holds and read the cache's layout."""
    from agent_habitat.verify.head import HeadTree
    from git_tree import commit_tree

    root = commit_tree(tmp_path / "repo", {"calc.py": "X = 1\n"})
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    old = os.umask(0o022)  # the usual umask, whatever this process had
    try:
        exported = HeadTree(root, head, state).export()
        write_private(state / "baseline" / "findings" / "ab" / "abcd.json", "{}")
    finally:
        os.umask(old)
    assert (exported / "calc.py").read_text(encoding="utf-8") == "X = 1\n"
    folders = [p for p in state.rglob("*") if p.is_dir() and exported not in p.parents]
    assert state / "baseline" in folders
    modes = {str(p.relative_to(state)): oct(stat.S_IMODE(p.stat().st_mode)) for p in folders}
    assert set(modes.values()) == {"0o700"}, modes


def test_the_node_toolchain_s_state_folders_are_private(tmp_path: Path) -> None:
    """`node/tsc/` (tsc's incremental state) and `checker-warm/` (the warm tsc's log and
    status) were made by `mkdir(parents=True)`: 0755 under the umask most users have."""
    from agent_habitat.verify.rungs.warm_checker import ServerSpec
    from agent_habitat.verify.toolchains.node.compile import tsc_argv
    from agent_habitat.verify.toolchains.node.tsc_warm import TscWarm

    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    root = tmp_path / "project"
    root.mkdir()
    workspace = Workspace(root=root, state_dir=state)
    missing = str(tmp_path / "no-such-node")
    warm = TscWarm(workspace, root, ServerSpec(tool="tsc", argv=[missing], env={}), "k")
    old = os.umask(0o022)
    try:
        tsc_argv(tmp_path / "tsc", state, root, "head")
        with pytest.raises(FileNotFoundError):  # no such program: made before the spawn
            warm.start()
    finally:
        os.umask(old)
    folders = [p for p in state.rglob("*") if p.is_dir()]
    assert {state / "node" / "tsc", warm.dir} <= set(folders)
    modes = {str(p.relative_to(state)): oct(stat.S_IMODE(p.stat().st_mode)) for p in folders}
    assert set(modes.values()) == {"0o700"}, modes


def test_the_substrates_test_deps_and_mypy_cache_folders_are_private(tmp_path: Path) -> None:
    """`substrates/` (made by `mkdir(parents=True)` under a test run's folder), `testdeps/`
    (the recorded test dependencies) and `mypy-cache/` (made by mypy itself) were 0755."""
    from types import SimpleNamespace
    from typing import Any, cast

    from agent_habitat.verify.deps_store import TestRun, merge_run
    from agent_habitat.verify.rungs import compile as compile_rung
    from agent_habitat.verify.runner.config import SubstrateConfig
    from agent_habitat.verify.runner.substrate import SubstrateFactory
    from agent_habitat.verify.select.testdeps import deps_store_dir

    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    root = tmp_path / "project"
    root.mkdir()
    workspace = Workspace(root=root, state_dir=state)
    ctx = cast(Any, SimpleNamespace(workspace=workspace))
    env = cast(Any, SimpleNamespace(mypy=lambda: (["mypy"], [])))
    old = os.umask(0o022)
    try:
        SubstrateFactory(workspace.substrates_dir, SubstrateConfig(), root).create("t")
        merge_run(deps_store_dir(state), TestRun("r", None, {}, {}, {}, [], {}, {}, {}), {}, {})
        argv = compile_rung._plain_mypy(ctx, env, [], ["calc.py"])
    finally:
        os.umask(old)
    assert str(state / "mypy-cache") in argv
    folders = [p for p in state.rglob("*") if p.is_dir()]
    assert {workspace.substrates_dir, deps_store_dir(state), state / "mypy-cache"} <= set(folders)
    modes = {str(p.relative_to(state)): oct(stat.S_IMODE(p.stat().st_mode)) for p in folders}
    assert set(modes.values()) == {"0o700"}, modes


@pytest.mark.timeout(400)
def test_every_folder_a_warm_host_and_its_verify_make_in_the_state_folder_is_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue names `dmypy/`, `pytest-warm/` and `baseline/`: a real host warms a real
    project (the dmypy daemon, the warm pytest), a verify climbs, under the usual umask, and
    then every folder and file directly in the state folder is the user's alone (what is
    deeper, a HEAD export or mypy's own cache, is behind one of them)."""
    from agent_habitat.reach import ensure_host, stop_host
    from agent_habitat.trust import ProjectTrust
    from agent_habitat.verify.runner.warm_status import read_warm
    from git_tree import commit_tree

    from .hostile import warm_env

    root = commit_tree(
        tmp_path / "calc",
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            "calc.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add() -> None:\n"
            "    assert add(1, 2) == 3\n",
        },
    )
    for key, value in warm_env().items():
        if key.startswith("HABITAT_"):
            monkeypatch.setenv(key, value)
    workspace = Workspace.for_project(root)
    old = os.umask(0o022)
    try:
        ProjectTrust().grant_sync(root, "verb")
        ensure_host(root)
        deadline = time.monotonic() + 300  # a bound: dmypy and pytest start cold here
        while not (read_warm(workspace) or {}).get("finished_at"):
            assert time.monotonic() < deadline, f"the warm-up did not end: {read_warm(workspace)}"
            time.sleep(0.05)
        (root / "calc.py").write_text(
            "def add(a: int, b: int) -> int:\n    return b + a\n", encoding="utf-8"
        )
        code = main(["verify", "--project", str(root), "--policy", "standard"])
    finally:
        os.umask(old)
        stop_host(root)
    assert code == 0
    state = workspace.state_dir
    made = {p.name: oct(stat.S_IMODE(p.lstat().st_mode)) for p in state.iterdir()}
    assert {"dmypy", "pytest-warm", "baseline"} <= set(made), made
    assert {name for name, mode in made.items() if mode not in ("0o700", "0o600")} == set(), made
    assert oct(stat.S_IMODE(state.stat().st_mode)) == "0o700"


def test_the_test_deps_store_is_private_when_a_test_run_writes_it_first(tmp_path: Path) -> None:
    """The recording plugin, in the project's pytest, made `testdeps/` with `makedirs` under
    the user's umask (0755) when a test run, not the store's merge, was its first writer."""
    from agent_habitat.verify.config import LadderConfig
    from agent_habitat.verify.layout import discover_layout
    from agent_habitat.verify.select.testdeps import Recording, deps_store_dir
    from agent_habitat.verify.snapshot import take_snapshot
    from git_tree import commit_tree

    root = commit_tree(tmp_path / "repo", {"calc.py": "X = 1\n", "tests/test_calc.py": ""})
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    old = os.umask(0o022)
    try:
        recording = Recording(
            root, discover_layout(root, LadderConfig()), state, take_snapshot(root)
        )
        # What the plugin does in the test process, at its end.
        os.makedirs(recording.env()["HABITAT_TESTDEPS_OUT"], mode=0o700, exist_ok=True)
    finally:
        os.umask(old)
    folders = [p for p in state.rglob("*") if p.is_dir()]
    assert deps_store_dir(state) in folders
    modes = {str(p.relative_to(state)): oct(stat.S_IMODE(p.stat().st_mode)) for p in folders}
    assert set(modes.values()) == {"0o700"}, modes
