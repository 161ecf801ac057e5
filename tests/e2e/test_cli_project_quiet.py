"""`habitat project` with no host is answered in the CLI's process (`cli.project_quiet`:
neither pydantic, anyio nor the habitat) with what the full path prints — stdout, stderr,
exit code, `--json` — on many states: clean, dirty, untracked, a virtualenv folded, a rename,
no commits yet, detached, an upstream ahead and behind, no upstream, a folder outside git,
a verify record or none (green, red, stale), trusted or not. What it cannot prove the same
takes the full path."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Literal

import pytest

from agent_habitat.cli import main
from agent_habitat.project_scene import GitFile, ProjectSceneResult
from agent_habitat.project_scene_git import scene_data
from agent_habitat.store import Database
from agent_habitat.verify.runner.record import EpochRecords
from agent_habitat.verify.runner.report import EpochReport
from agent_habitat.verify.toolchains import snapshot_of
from agent_habitat.workspace import Workspace
from cli_probe import FullPath, Probed, full_path, probe

_FULL = "import agent_habitat.cli.project_quiet as quiet\nquiet.quiet_project = lambda call: None\n"
"""The full path alone: the quick reader stood down."""

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def _git(root: Path, *argv: str) -> None:
    subprocess.run(
        ["git", *argv], cwd=root, env={**os.environ, **_GIT_ENV}, check=True, capture_output=True
    )


def _epoch(epoch: int, state: Literal["green", "red"]) -> EpochReport:
    return EpochReport(
        epoch=epoch,
        task=f"t-{epoch}",
        state=state,
        green=state == "green",
        snapshot="s",
        policy="standard",
        touched=["a.py"],
        touched_count=1,
        rungs=[],
        duration_s=0.5,
        finished_at=1.0,
    )


def _save(root: Path, report: EpochReport) -> None:
    db = Database(Workspace.for_project(root).db_path)
    try:
        EpochRecords(db).save(root, report, snapshot_of(root))
    finally:
        db.close()


def _same(answer: FullPath, reader: FullPath, *argv: str) -> Probed:
    """Both lines (text and `--json`) answered alike; the quick reader loaded nothing heavy."""
    quicks = []
    for extra in ((), ("--json",)):
        quick = reader("project", *argv, *extra)
        assert quick.loaded == "", extra
        full = answer("project", *argv, *extra)
        assert "agent_habitat.habitat" in full.loaded
        assert quick.answer() == full.answer(), extra
        quicks.append(quick)
    return quicks[0]


def test_the_quick_scene_is_the_full_paths(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(project, "init", "-q", "-b", "main")
    (project / "a.py").write_text("a = 1\n", encoding="utf-8")
    (project / "b.py").write_text("b = 1\n", encoding="utf-8")
    main(["history", "--project", str(project)])  # the state exists: nothing to do
    capsys.readouterr()
    with full_path(project, _FULL) as answer, full_path(project, "") as reader:
        assert "(no commits yet)" in _same(answer, reader).stdout
        _git(project, "add", "-A")
        _git(project, "commit", "-qm", "first commit")
        clean = _same(answer, reader)
        assert "HEAD " in clean.stdout
        assert "not trusted" in clean.stdout
        (project / "a.py").write_text("a = 2\n", encoding="utf-8")
        (project / "new.txt").write_text("new\n", encoding="utf-8")
        venv = project / "env"
        (venv / "lib").mkdir(parents=True)
        (venv / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
        (venv / "lib" / "x.py").write_text("", encoding="utf-8")
        _git(project, "mv", "b.py", "c.py")
        moved = _same(answer, reader)
        assert "env/" in moved.stdout
        assert "c.py" in moved.stdout
        main(["trust", "--project", str(project)])
        capsys.readouterr()
        assert "not trusted" not in _same(answer, reader).stdout
        _save(project, _epoch(1, "red"))
        assert "red" in _same(answer, reader).stdout
        _git(project, "add", "-A")
        _git(project, "commit", "-qm", "second")
        _save(project, _epoch(2, "green"))
        _same(answer, reader)
        (project / "a.py").write_text("a = 3\n", encoding="utf-8")  # since: stale
        assert "stale" in _same(answer, reader).stdout
        _git(project, "checkout", "-q", "--detach")
        assert "(detached HEAD)" in _same(answer, reader).stdout
    # A clone: an upstream, ahead and behind.
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(project), str(clone))
    _git(project, "checkout", "-q", "main")
    (project / "a.py").write_text("a = 4\n", encoding="utf-8")
    _git(project, "commit", "-qam", "upstream moves")
    (clone / "d.py").write_text("d = 1\n", encoding="utf-8")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-qm", "clone moves")
    _git(clone, "fetch", "-q")
    main(["history", "--project", str(clone)])
    capsys.readouterr()
    with full_path(clone, _FULL) as answer, full_path(clone, "") as reader:
        assert "→ origin/main ahead 1 behind 1" in _same(answer, reader).stdout
    # A folder outside git, named with --project.
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "b.py").write_text("y = 1\n", encoding="utf-8")
    main(["history", "--project", str(plain)])
    capsys.readouterr()
    with full_path(plain, _FULL) as answer, full_path(plain, "") as reader:
        assert "not inside a git work tree" in _same(answer, reader, "--project", str(plain)).stdout


def test_what_the_quick_scene_cannot_prove_takes_the_full_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(project, "init", "-q", "-b", "main")

    def loaded(*argv: str) -> str:
        return probe(project, "project", *argv).loaded

    assert "agent_habitat.habitat" in loaded()  # no state yet: the full path makes it
    assert loaded() == ""
    assert "pydantic" in loaded("--project", str(project / "nowhere"))  # its error names it
    (project / "pyproject.toml").write_text("[tool.habitat]\n", encoding="utf-8")
    assert "agent_habitat.habitat" in loaded()  # configured: the full path reads it
    (project / "pyproject.toml").unlink()
    sub = project / "sub"
    sub.mkdir()
    plain = probe(sub, "project")  # the cwd inside the tree: its top is the project
    assert plain.loaded == ""
    assert f"project={project}" in plain.stdout


def test_the_plain_scene_has_the_models_fields(tmp_path: Path) -> None:
    assert list(scene_data(None)) == list(ProjectSceneResult.model_fields)
    root = tmp_path / "r"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "f").write_text("x", encoding="utf-8")
    scene = scene_data(str(root))
    assert [list(f) for f in scene["untracked"]] == [list(GitFile.model_fields)]
    assert ProjectSceneResult.model_validate(scene).model_dump(mode="json") == scene


_FULL_TRUST = (
    "import agent_habitat.cli.project_quiet as quiet\nquiet.quiet_trust = lambda call: None\n"
)


def test_trust_of_a_trusted_checkout_is_the_full_paths(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(project, "init", "-q", "-b", "main")
    (project / "a.py").write_text("a = 1\n", encoding="utf-8")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "first commit")
    main(["history", "--project", str(project)])  # the state exists: nothing to do
    capsys.readouterr()
    trust_file = Workspace.for_project(project).state_dir / "trust.json"
    granted = probe(project, "trust")  # not trusted: granted (quietly too)
    assert '"already": false' in granted.stdout
    written = trust_file.read_bytes()
    with full_path(project, _FULL_TRUST) as answer, full_path(project, "") as reader:
        for argv in (("trust",), ("trust", "--json"), ("trust", "--project", str(project))):
            quick = reader(*argv)
            assert quick.loaded == "", argv
            full = answer(*argv)
            assert "agent_habitat.habitat" in full.loaded
            assert quick.answer() == full.answer(), argv
            assert '"already": true' in quick.stdout
    assert trust_file.read_bytes() == written  # neither wrote it again
    # An entry for another checkout at the same path: the full path grants it anew.
    data = json.loads(written)
    data["roots"][str(project)]["identity"]["inode"] += 1
    trust_file.write_text(json.dumps(data), encoding="utf-8")
    regranted = probe(project, "trust")
    assert '"already": false' in regranted.stdout
    # A folder outside git, named with --project.
    plain = tmp_path / "plain"
    plain.mkdir()
    main(["trust", "--project", str(plain)])
    capsys.readouterr()
    with full_path(plain, _FULL_TRUST) as answer, full_path(plain, "") as reader:
        argv = ("trust", "--project", str(plain))
        quick = reader(*argv)
        assert quick.loaded == ""
        assert quick.answer() == answer(*argv).answer()


def _granted(root: Path, before: int) -> tuple[str, list[tuple[object, ...]], int]:
    """`trust.json` as written, the new entry's time left out (it must be a float of now),
    the journal's rows after `before` (their time and id left out), and the newest row's id."""
    path = Workspace.for_project(root).state_dir / "trust.json"
    text = path.read_text(encoding="utf-8")
    when = json.loads(text)["roots"][str(root)]["trusted_at"]
    assert type(when) is float
    assert abs(when - time.time()) < 600
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    db = Database(Workspace.for_project(root).db_path)
    try:
        rows = db.conn.execute(
            "SELECT id, kind, workspace, task, tab, data_json FROM events WHERE id > ? ORDER BY id",
            (before,),
        ).fetchall()
    finally:
        db.close()
    newest = rows[-1][0] if rows else before
    return text.replace(repr(when), "WHEN"), [tuple(r)[1:] for r in rows], newest


_OTHERS = {
    "version": 1,  # not the model's: left out
    "roots": {
        "/elsewhere": {
            "identity": {"root": "/elsewhere", "device": 1, "inode": 2},  # defaults left out
            "trusted_at": 5,  # an int: the model's float
            "how": "prompt",
            "note": "not the model's",
        },
        "/über": {
            "identity": {
                "root": "/über",
                "device": 3,
                "inode": 4,
                "git_device": 3,
                "git_inode": 9,
                "root_commits": ["ab", "cd"],
            },
            "trusted_at": 1733620000.25,
            "how": "verify",
        },
    },
}


@pytest.mark.parametrize("kind", ["commits", "no commits", "outside git"])
def test_the_first_trust_is_granted_as_the_full_path_grants_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """The same answer, the same `trust.json` (the entries there before re-dumped as the model
    reads them, this checkout's added) and the same `project.trusted` row in the journal."""
    project = tmp_path / "project"
    project.mkdir()
    if kind != "outside git":
        _git(project, "init", "-q", "-b", "main")
    if kind == "commits":
        (project / "a.py").write_text("a = 1\n", encoding="utf-8")
        _git(project, "add", "-A")
        _git(project, "commit", "-qm", "first commit")
    main(["history", "--project", str(project)])  # the state exists: nothing to do
    capsys.readouterr()
    trust_file = Workspace.for_project(project).state_dir / "trust.json"
    argvs = [("trust", "--project", str(project)), ("trust", "--json", "--project", str(project))]
    if kind != "outside git":
        argvs.append(("trust",))
    newest = 0
    with full_path(project, _FULL_TRUST) as answer, full_path(project, "") as reader:
        for argv in argvs:
            for start in (None, _OTHERS):
                said = []
                for path in (answer, reader):
                    if start is None:
                        trust_file.unlink(missing_ok=True)
                    else:
                        trust_file.write_text(json.dumps(start), encoding="utf-8")
                    done = path(*argv)
                    text, rows, newest = _granted(project, newest)
                    said.append((done.answer(), text, rows))
                    assert '"already": false' in done.stdout
                    assert [row[0] for row in rows] == ["project.trusted"], rows
                assert done.loaded == "", argv  # the quick path's (the reader's)
                assert said[1] == said[0], (argv, start)


def test_a_trust_file_the_quick_path_cannot_read_as_the_model_takes_the_full_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(project, "init", "-q", "-b", "main")
    main(["history", "--project", str(project)])
    capsys.readouterr()
    trust_file = Workspace.for_project(project).state_dir / "trust.json"
    odd = {"roots": {"/x": {"identity": {"root": "/x", "device": "1", "inode": 2}}}}
    for text in (
        "{not json",
        json.dumps(odd),
        json.dumps(
            {
                "roots": {
                    "/x": {
                        "identity": {"root": "/x", "device": 1, "inode": 2},
                        "trusted_at": 1e-7,
                        "how": "verb",
                    }
                }
            }
        ),
    ):
        trust_file.write_text(text, encoding="utf-8")
        granted = probe(project, "trust")
        assert "agent_habitat.habitat" in granted.loaded, text
        assert '"already": false' in granted.stdout


def test_the_identitys_defaults_are_the_models() -> None:
    from agent_habitat.cli.project_quiet import _IDENTITY_DEFAULTS
    from agent_habitat.trust import CheckoutIdentity

    fields = CheckoutIdentity.model_fields
    assert list(fields)[:3] == ["root", "device", "inode"]
    defaults = {n: f.get_default(call_default_factory=True) for n, f in fields.items()}
    assert list(defaults.items())[3:] == list(_IDENTITY_DEFAULTS.items())
