from __future__ import annotations

import subprocess
from pathlib import Path

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.verify.models import LadderRequest
from agent_habitat.verify.runner.coalesce import covers, merge_requests
from agent_habitat.verify.runner.epochs import changed_between
from agent_habitat.verify.snapshot import take_snapshot


def test_merging_takes_the_highest_policy_and_the_union_of_rungs_and_files() -> None:
    merged, notes = merge_requests(
        [
            LadderRequest(policy="minimal", files=["a.py"]),
            LadderRequest(rungs=["test.full"]),
            LadderRequest(policy="strict"),
        ],
        "standard",
        touched=["b.py"],
    )
    assert merged.policy == "strict"
    assert merged.rungs == [
        "diagnose.files",
        "compile.project",
        "build.affected",
        "test.scoped",
        "test.full",
    ]
    assert merged.files == ["a.py", "b.py"]
    assert notes == []


def test_a_filter_merged_with_a_request_for_every_affected_test_is_dropped_and_said() -> None:
    merged, notes = merge_requests(
        [LadderRequest(filter=["-k add"]), LadderRequest()], "standard", touched=[]
    )
    assert merged.filter is None
    assert notes == ["coalesced: filter ['-k add'] dropped for the affected-test selection"]
    both, _ = merge_requests(
        [LadderRequest(filter=["-k add"]), LadderRequest(filter=["tests/t.py"])], "minimal", []
    )
    assert both.filter == ["-k add", "tests/t.py"]
    assert both.policy == "minimal"


def test_a_run_covers_a_request_asking_for_no_more() -> None:
    done = LadderRequest(policy="standard")
    assert covers(done, LadderRequest(policy="minimal"), "standard")
    assert covers(done, LadderRequest(), "standard")
    assert not covers(done, LadderRequest(policy="strict"), "standard")
    assert not covers(done, LadderRequest(filter=["-k x"]), "standard")
    assert not covers(LadderRequest(files=["a.py"]), LadderRequest(), "standard")
    # A run of the dirty set covers a file only when the file is part of that change.
    dirty = LadderRequest()
    assert covers(dirty, LadderRequest(files=["a.py"]), "standard", ["a.py", "b.py"])
    assert not covers(dirty, LadderRequest(files=["c.py"]), "standard", ["a.py", "b.py"])


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True
    )


def test_changed_between_looks_at_content_across_commits(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    text = root / "src/calc/text.py"
    text.write_text("X = 1\n", encoding="utf-8")
    verified = take_snapshot(root)
    _git(root, "commit", "-qam", "the verified change")
    assert changed_between(root, verified, take_snapshot(root)) == []
    (root / "src/calc/arith.py").write_text("Y = 1\n", encoding="utf-8")
    _git(root, "commit", "-qam", "another change")
    assert changed_between(root, verified, take_snapshot(root)) == ["src/calc/arith.py"]
    text.write_text("X = 2\n", encoding="utf-8")
    now = take_snapshot(root)
    assert changed_between(root, verified, now) == ["src/calc/arith.py", "src/calc/text.py"]
    text.write_text("X = 1\n", encoding="utf-8")
    _git(root, "checkout", "-q", "HEAD~1", "--", "src/calc/arith.py")
    assert changed_between(root, verified, take_snapshot(root)) == []
