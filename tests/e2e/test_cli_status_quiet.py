"""`habitat status` with no host reads the record here (`cli.status_quiet`, neither pydantic,
anyio nor the habitat) and prints what the full path prints — stdout, stderr, exit code — on
every recorded state: no epoch, green, red with findings, stale, running (lost), cancelled,
several toolchains' rungs, a `--task`, trusted or not, the warm-up's lines, `--json`. What it
cannot prove the same takes the full path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_habitat.cli import main
from agent_habitat.store import Database
from agent_habitat.verify.runner.record import EpochRecords
from agent_habitat.verify.runner.report import (
    DiagnosticLine,
    EpochReport,
    RungReport,
    VerifyStatusResult,
)
from agent_habitat.verify.runner.report_shape import LITERALS, SHAPES
from agent_habitat.verify.timing import Timing
from agent_habitat.verify.toolchains import snapshot_of
from agent_habitat.workspace import Workspace
from cli_probe import PROBE, FullPath, Probed, full_path, probe

_FULL = "import agent_habitat.cli.status_quiet as quiet\nquiet.quiet_status = lambda call: None\n"
"""The full path alone: the quiet reader stood down."""

_ARGVS = (("status",), ("status", "--json"))


def _git(root: Path, *argv: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *argv],
        cwd=root,
        check=True,
        capture_output=True,
    )


def _save(root: Path, report: EpochReport, *, snapshot: bool = True) -> None:
    """The record a process that served verify leaves (`EpochRecords.save`, the snapshot
    the runner takes)."""
    db = Database(Workspace.for_project(root).db_path)
    try:
        EpochRecords(db).save(root, report, snapshot_of(root) if snapshot else None)
    finally:
        db.close()


def _red(epoch: int) -> EpochReport:
    failing = DiagnosticLine(
        file="tests/test_a.py",
        line=3,
        code="AssertionError",
        message="tests/test_a.py::test_one: assert 1 == 2",
        source="pytest",
        text="assert 1 == 2",
    )
    warned = DiagnosticLine(file="a.py", line=1, code="W1", severity="warning", message="w")
    old = DiagnosticLine(file="b.py", line=2, code="E1", message="old", preexisting=True)
    return EpochReport(
        epoch=epoch,
        task=f"t-{epoch}",
        state="red",
        green=False,
        snapshot="s",
        policy="standard",
        touched=["a.py", "src/lib.rs", "web/app.ts"],
        touched_count=3,
        rungs=[
            RungReport(rung="diagnose.files", task=f"t-{epoch}", state="green", tool="ruff"),
            RungReport(
                rung="compile.project",
                task=f"t-{epoch}",
                state="skipped",
                reason="the change is only comments: nothing to type-check",
            ),
            RungReport(
                rung="test.scoped",
                task=f"t-{epoch}",
                state="red",
                tool="pytest, cargo test, vitest",
                reason="1 test failed — «ü»",
                duration_s=1.25,
                exit_code=1,
                new_findings=1,
                preexisting_findings=1,
                diagnostics=[failing, old, warned],
                notes=["1 selected", "3 passed"],
                command_line="python -m pytest tests/test_a.py",
                spool="/tmp/spool/test.scoped.log",
            ),
        ],
        selection="1 test path(s): tests/test_a.py imports a.py",
        notes=["a note"],
        duration_s=2.5,
        timing=Timing(wall_s=3.2, rungs_s=1.25, prepare_s=0.4, start_s=1.55),
        finished_at=time.time(),
    )


def _green(epoch: int) -> EpochReport:
    return EpochReport(
        epoch=epoch,
        task=f"t-{epoch}",
        state="green",
        green=True,
        verified_state="green",
        policy="minimal",
        rungs=[
            RungReport(rung="diagnose.files", task=f"t-{epoch}", state="green", tool="ruff, eslint")
        ],
        duration_s=0.5,
        finished_at=time.time(),
    )


def _answers(
    root: Path, answer: FullPath, reader: FullPath | None, *argvs: tuple[str, ...]
) -> Probed:
    """Each command line's quick answer (neither pydantic, anyio nor the habitat loaded)
    equal to the full path's; the first quick answer. `reader`: the quick answers from one
    interpreter (`cli_probe.full_path` with the quick paths on), which says after each what
    it has loaded so far, so nothing heavy after the last means no quick answer loaded
    anything; None: each from a fresh interpreter, as a user's command runs (each test
    asks one state so; a fresh one for each of the 36 answers here made the test a serial
    chain of interpreters that took minutes at load 40)."""
    quicks = []
    for argv in argvs or _ARGVS:
        quick = probe(root, *argv) if reader is None else reader(*argv)
        assert quick.loaded == "", argv
        full = answer(*argv)
        assert "agent_habitat.habitat" in full.loaded, argv
        assert quick.answer() == full.answer(), argv
        quicks.append(quick)
    return quicks[0]


def _warm(root: Path, items: dict[str, object], *, finished: bool = True) -> None:
    state = Workspace.for_project(root).state_dir
    data = {
        "owner": {"pid": 2147483646, "create_time": 1.0},
        "started_at": time.time() - 60,
        "finished_at": time.time() if finished else None,
        "items": items,
    }
    (state / "warm.json").write_text(json.dumps(data), encoding="utf-8")


def test_status_with_no_host_reads_as_the_full_path_prints_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(project, "init", "-q")
    (project / "a.py").write_text("x = 1\n", encoding="utf-8")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "one")
    main(["run", "true", "--project", str(project)])
    capsys.readouterr()
    with full_path(project, _FULL) as answer, full_path(project, "") as reader:
        fresh = _answers(project, answer, None)
        assert "state=never green=false: not trusted" in fresh.stdout
        main(["trust", "--project", str(project)])
        capsys.readouterr()
        assert "never verified" in _answers(project, answer, reader).stdout
        (project / "a.py").write_text("x = 2\n", encoding="utf-8")  # dirty: a change
        _save(project, _red(1))
        quick = _answers(project, answer, reader, *_ARGVS, ("status", "--task", "t-1"))
        assert "tests/test_a.py:3" in quick.stdout
        _save(project, _green(2))
        assert "state=green green=true" in _answers(project, answer, reader).stdout
        (project / "a.py").write_text("x = 3\n", encoding="utf-8")  # since: stale
        assert "state=stale" in _answers(project, answer, reader).stdout
        (project / "a.py").write_text("x = 2\n", encoding="utf-8")  # back: its verdict again
        assert "state=green" in _answers(project, answer, reader).stdout
        running = _green(3).model_copy(update={"state": "running", "green": False})
        running.finished_at = None
        _save(project, running)
        assert "state=lost" in _answers(project, answer, reader).stdout  # nothing serves it
        cancelled = _red(4).model_copy(update={"state": "cancelled", "snapshot": None})
        _save(project, cancelled, snapshot=False)
        assert "before it took a snapshot" in _answers(project, answer, reader).stdout
        _git(project, "add", "-A")
        _git(project, "commit", "-qm", "two")  # HEAD moves: the record's head is older
        _answers(project, answer, reader, *_ARGVS, ("status", "--task", "t-2", "--json"))
        # The warm-up's lines, as they are now: its daemons gone with the host.
        _warm(
            project,
            {
                "import_graph": {"state": "warm", "detail": "12 modules"},
                "test_deps": {"state": "skipped", "detail": "no recorded run"},
                "lint_baseline": {"state": "failed", "detail": "ruff: not found"},
                "type_daemon": {"state": "warm", "detail": "dmypy daemon pid 1", "pid": 1},
                "pytest": {"state": "warm", "detail": "pid 2", "pid": 2},
            },
        )
        assert "the warm pytest has exited since" in _answers(project, answer, reader).stdout
        _warm(project, {"pytest": {"state": "fresh", "detail": "the project imports itself"}})
        _answers(project, answer, reader)
        _warm(project, {"import_graph": {"state": "warm", "detail": "x"}}, finished=False)
        assert "ended before it finished" in _answers(project, answer, reader).stdout
    # A pyproject.toml without a [tool] table configures nothing: still read here.
    (project / "pyproject.toml").write_text('[project]\nname = "p"\n', encoding="utf-8")
    with full_path(project, _FULL) as answer:
        _answers(project, answer, None)
    # A folder that is no git work tree, named with --project (the snapshot walks it).
    plain = project.parent / "plain"
    plain.mkdir()
    (plain / "b.py").write_text("y = 1\n", encoding="utf-8")
    main(["run", "true", "--project", str(plain)])
    capsys.readouterr()
    named = [(*argv, "--project", str(plain)) for argv in _ARGVS]
    with full_path(plain, _FULL) as answer, full_path(plain, "") as plains:
        _answers(plain, answer, None, *named)
        main(["trust", "--project", str(plain)])
        capsys.readouterr()
        _save(plain, _red(1))
        (plain / "b.py").write_text("y = 2\n", encoding="utf-8")
        assert "state=stale" in _answers(plain, answer, plains, *named).stdout
        # Node's and Rust's: their output folders are no part of the change, either way.
        for marker in ("package.json", "Cargo.toml"):
            (plain / marker).write_text("{}\n", encoding="utf-8")
        for built in ("node_modules/x.js", "target/debug/y", "dist/z.js"):
            (plain / built).parent.mkdir(parents=True, exist_ok=True)
            (plain / built).write_text("built\n", encoding="utf-8")
        _save(plain, _green(2))
        (plain / "target" / "debug" / "y").write_text("rebuilt\n", encoding="utf-8")
        assert "state=green" in _answers(plain, answer, plains, *named).stdout


def test_what_the_quiet_reader_cannot_prove_takes_the_full_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(project, "init", "-q")
    main(["trust", "--project", str(project)])
    capsys.readouterr()

    def loaded(*argv: str) -> str:
        return probe(project, "status", *argv).loaded

    assert loaded() == ""
    assert "agent_habitat.habitat" in loaded("--task", "nosuch")  # its error names the task
    tiny = _green(1)
    tiny.duration_s = 1e-05  # pydantic writes it as 0.00001, Python's json as 1e-05
    _save(project, tiny)
    assert "agent_habitat.habitat" in loaded("--json")
    _save(project, _green(2))
    assert loaded("--json") == ""
    db = Database(Workspace.for_project(project).db_path)
    with db.transaction() as conn:  # a record an older habitat wrote: a field it lacked
        row = conn.execute("SELECT task, report_json FROM verify_epochs").fetchall()[-1]
        older = json.loads(row["report_json"])
        del older["requests"]
        conn.execute(
            "UPDATE verify_epochs SET report_json = ?, updated_at = ? WHERE task = ?",
            (json.dumps(older), time.time() + 1, row["task"]),
        )
    db.close()
    assert "agent_habitat.habitat" in loaded()
    trust = Workspace.for_project(project).state_dir / "trust.json"
    trust.write_text("{not json", encoding="utf-8")  # the full path warns and reads none
    assert "agent_habitat.habitat" in loaded()
    os.unlink(trust)
    db = Database(Workspace.for_project(project).db_path)
    with db.transaction() as conn:  # a server on record: the full path asks whether it lives
        conn.execute(
            "INSERT INTO servers (pid, create_time, root, started_at, updated_at)"
            " VALUES (2147483646, 1.0, ?, 1.0, 1.0)",
            (str(project),),
        )
    db.close()
    assert "agent_habitat.habitat" in loaded()


def test_the_shape_table_is_the_models() -> None:
    """`report_shape.SHAPES` and `status_quiet`'s fields are the report models' fields, in
    order, with their types (a model changed without the table takes the quiet path's
    answers away from the full path's)."""
    import types
    import typing

    from agent_habitat.cli.status_quiet import _STATUS_FIELDS

    def kind(annotation: object) -> str:
        args = typing.get_args(annotation)
        origin = typing.get_origin(annotation)
        if origin in (typing.Union, types.UnionType) and type(None) in args:
            (rest,) = (a for a in args if a is not type(None))
            return kind(rest) + "?"
        if origin is list:
            return f"[{kind(args[0])}]"
        if isinstance(annotation, type):
            return annotation.__name__
        values = _literal_values(annotation)
        name = next(n for n, v in LITERALS.items() if set(v) == set(values))
        return name

    for model in (DiagnosticLine, RungReport, Timing, EpochReport):
        fields = tuple((name, kind(f.annotation)) for name, f in model.model_fields.items())
        assert fields == SHAPES[model.__name__], model
    assert tuple(VerifyStatusResult.model_fields) == _STATUS_FIELDS


def _literal_values(annotation: object) -> list[object]:
    import typing

    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    out: list[object] = []
    for arg in typing.get_args(annotation):
        out.extend(_literal_values(arg))
    return out


def test_the_output_folders_are_the_toolchains(tmp_path: Path) -> None:
    """`output_dirs` (the quiet snapshot's) is `toolchains.ignored_dirs` for a project with
    each marker, both or none, and names every toolchain's `ignores`."""
    from agent_habitat.verify.output_dirs import BY_MARKER, output_dirs
    from agent_habitat.verify.toolchains import TOOLCHAINS, ignored_dirs

    assert {c.ignores for c in TOOLCHAINS.values() if c.ignores} == {n for _, n in BY_MARKER}
    for markers in ((), ("package.json",), ("Cargo.toml",), ("package.json", "Cargo.toml")):
        root = tmp_path / ("-".join(markers) or "none")
        root.mkdir()
        for marker in markers:
            (root / marker).write_text("{}\n", encoding="utf-8")
        assert output_dirs(str(root)) == ignored_dirs(root), markers
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "package.json").mkdir()  # a folder of that name: no marker
    assert output_dirs(str(tmp_path / "folder")) == ignored_dirs(tmp_path / "folder")


def test_a_reader_gone_ends_status_quietly(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`habitat status | head -1` with its reader gone before the answer: exit 141, as any
    Unix tool's, and no traceback, on the quiet path and on the full path."""
    _git(project, "init", "-q")
    main(["run", "true", "--project", str(project)])
    capsys.readouterr()
    for prelude, heavy in (("", False), (_FULL, True)):
        read, write = os.pipe()
        os.close(read)  # the reader left before the first byte
        try:
            done = subprocess.run(
                [sys.executable, "-c", prelude + PROBE, "status"],
                cwd=project,
                stdout=write,
                stderr=subprocess.PIPE,
                text=True,
                timeout=180,  # a bound for a hung process, not a speed claim
                check=False,
            )
        finally:
            os.close(write)
        err, _, loaded = done.stderr.rpartition("\nloaded:")
        assert (done.returncode, err) == (141, ""), prelude
        assert ("agent_habitat.habitat" in loaded) is heavy
