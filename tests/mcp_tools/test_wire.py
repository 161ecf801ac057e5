"""The structured content on the wire: lean by five rules, and valid against its schema."""

from __future__ import annotations

import json
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from pydantic import BaseModel

from agent_habitat.mcp_tools.render import brief
from agent_habitat.mcp_tools.schema import output_schema
from agent_habitat.mcp_tools.wire import fit, fit_output, lean_dump, wire_schema
from agent_habitat.shell.models import (
    KillArgs,
    KillResult,
    LastArgs,
    LastResult,
    RunArgs,
    RunResult,
)
from agent_habitat.verbs import VERBS
from agent_habitat.verify.runner.accounting import TimeAccount, TimeReport
from agent_habitat.verify.runner.report import (
    DiagnosticLine,
    EpochReport,
    RungReport,
    VerifyRunResult,
    VerifyStatusResult,
)

from .test_render import run_result


def cost(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode()) - 2


def numbers(count: int) -> str:
    return "".join(f"{i}\n" for i in range(1, count + 1))


def test_an_output_within_the_budget_is_left_as_it_is() -> None:
    assert fit_output("a\nb\n", 0, budget=100) == ("a\nb\n", 0)


def test_a_long_output_keeps_head_and_last_line_within_the_serialized_budget() -> None:
    body = numbers(5000)
    fitted, omitted = fit_output(body, 0, budget=2000)
    assert cost(fitted) <= 2000
    assert fitted.startswith("1\n2\n")
    assert fitted.endswith("\n5000\n")
    head, rest = fitted.split("\n… [", 1)
    tail = rest.split("] …\n", 1)[1]
    assert omitted == len(body) - len(head) - len(tail)
    assert f"{omitted} bytes omitted; full output in the spool" in fitted


def test_a_core_capped_output_is_recut_and_its_omitted_count_grows_by_what_was_cut() -> None:
    head, tail = numbers(2000), numbers(4000)[len(numbers(2000)) :]
    core = head + "\n… [7777 bytes omitted; full output in the spool] …\n" + tail
    fitted, omitted = fit_output(core, 7777, budget=3000)
    shown_head, rest = fitted.split("\n… [", 1)
    shown_tail = rest.split("] …\n", 1)[1]
    assert cost(fitted) <= 3000
    assert omitted == 7777 + len(head) - len(shown_head) + len(tail) - len(shown_tail)
    assert shown_tail.endswith("\n4000\n")
    assert fitted.count("bytes omitted") == 1


def test_one_huge_line_keeps_its_end() -> None:
    fitted, omitted = fit_output("x" * 10_000 + "END\n", 0, budget=1000)
    assert cost(fitted) <= 1000
    assert fitted.endswith("END\n")
    assert omitted > 9000


def test_nulls_defaults_echoed_arguments_and_derived_fields_are_left_out() -> None:
    result = run_result(output="hi\n", omitted_bytes=0, output_bytes=3, cursor=3, tab="web")
    args = RunArgs(command="make", tab="web")
    wire = lean_dump(result, args)
    # signal (null), timed_out (default), tab and command (echoed), cursor (= output_bytes),
    # output_bytes (= the size of output), omitted_bytes (0), spool (nothing left out), pid
    # (the run ended); cwd is not the server's default.
    assert wire == {
        "index": 4,
        "state": "exited",
        "exit_code": 2,
        "duration_s": 1.5,
        "cwd": "/p",
        "output": "hi\n",
    }
    assert "cwd" not in lean_dump(result, args, {"cwd": "/p"}), "the project root is the default"


def test_a_field_that_says_something_new_stays() -> None:
    result = run_result(state="running", exit_code=None, cursor=1000)
    wire = lean_dump(result, RunArgs(command="other", tab="t"))
    assert (wire["pid"], wire["command"], wire["tab"]) == (99, "make", "main")
    assert (wire["omitted_bytes"], wire["spool"]) == (900, "/state/spool/run-4/output")
    # While it runs the size is the cursor to pass as `since`; once ended, output_bytes.
    assert (wire["cursor"], "output_bytes" in wire) == (1000, False)
    ended = lean_dump(run_result())
    assert (ended["output_bytes"], "cursor" in ended) == (1000, False)
    moved = lean_dump(run_result(cursor=1200))
    assert (moved["cursor"], moved["output_bytes"]) == (1200, 1000)


def test_an_exit_code_of_zero_and_a_kill_that_left_processes_alive_are_kept() -> None:
    kill = KillResult(tab="t", index=1, killed=True, pids=[5, 6], signal="SIGTERM", remaining=[6])
    assert lean_dump(kill, KillArgs(tab="t")) == {
        "index": 1,
        "killed": True,
        "pids": [5, 6],
        "remaining": [6],
    }
    assert lean_dump(run_result(exit_code=0))["exit_code"] == 0


def test_a_nested_field_equal_to_its_parents_is_left_out_but_never_a_red_state() -> None:
    rung = RungReport(rung="test.scoped", task="v1.test.scoped", state="red", reason="1 failed")
    skipped = RungReport(rung="test.full", task="v1.test.full", state="skipped")
    epoch = EpochReport(epoch=2, task="v1", state="red", green=False, verified_state="red")
    epoch.rungs = [rung, skipped]
    run = VerifyRunResult(
        task="v1", epoch=2, snapshot="s", state="red", green=False, summary="red", result=epoch
    )
    wire = lean_dump(run)
    assert wire == {
        "task": "v1",
        "epoch": 2,
        "state": "red",
        "green": False,  # and the snapshot is left out of a failure (rule 7)
        "result": {
            "state": "red",
            "rungs": [
                {"rung": "test.scoped", "state": "red", "reason": "1 failed"},
                {"rung": "test.full", "state": "skipped"},
            ],
        },
    }


def test_a_green_rung_in_a_green_epoch_still_leaves_its_state_out() -> None:
    rung = RungReport(rung="diagnose.files", task="v1.diagnose.files", state="green")
    epoch = EpochReport(epoch=2, task="v1", state="green", green=True, rungs=[rung])
    status = VerifyStatusResult(
        green=True, summary="green", stale=False, current_snapshot="s", epoch=epoch
    )
    assert lean_dump(status)["epoch"]["rungs"] == [{"rung": "diagnose.files"}]


def test_a_failed_verify_run_is_what_to_fix_and_keeps_its_red_state() -> None:
    found = DiagnosticLine(
        file="tests/test_a.py",
        line=6,
        code="AssertionError",
        message="tests/test_a.py::test_add: AssertionError: two and two",
        source="pytest",
        text='assert total == 5, "two and two"',
    )
    red = RungReport(
        rung="test.scoped",
        task="v1.test.scoped",
        state="red",
        reason="1 test failure(s), first tests/test_a.py::test_add: AssertionError: two and two",
        tool="pytest",
        duration_s=2.5,
        exit_code=1,
        new_findings=1,
        diagnostics=[found],
        notes=["1 selected: tests/test_a.py changed"],
        command_line="python -m pytest tests/test_a.py",
        spool="/s/test.scoped.out",
    )
    lint = RungReport(rung="diagnose.files", task="v1.diagnose.files", state="green", tool="ruff")
    lint.duration_s, lint.spool = 0.03, "/s/lint.out"
    epoch = EpochReport(
        epoch=2, task="v1", state="red", green=False, snapshot="s", head="abc", policy="standard"
    )
    epoch.rungs, epoch.finished_at = [lint, red], 1.0
    run = VerifyRunResult(
        task="v1", epoch=2, snapshot="s", state="red", green=False, summary="red", result=epoch
    )
    wire = lean_dump(run)
    assert (wire["state"], wire["green"], wire["task"]) == ("red", False, "v1")
    rungs = wire["result"]["rungs"]
    assert rungs[0] == {"rung": "diagnose.files", "state": "green", "tool": "ruff"}
    assert rungs[1] == {
        "rung": "test.scoped",
        "state": "red",
        "tool": "pytest",
        "duration_s": 2.5,
        "exit_code": 1,
        "diagnostics": [
            {
                "file": "tests/test_a.py",
                "line": 6,
                "code": "AssertionError",
                "message": "tests/test_a.py::test_add: AssertionError: two and two",
                "text": 'assert total == 5, "two and two"',
            }
        ],
        "spool": "/s/test.scoped.out",
    }
    assert set(wire["result"]) == {"state", "rungs"}, "snapshot, HEAD, policy, end: verify_status"
    assert brief(run) == "red: test.scoped red\n"
    jsonschema.validate(wire, output_schema(VerifyRunResult))
    # A rung that failed without findings keeps how it ran: that is all there is to go on.
    red.diagnostics, red.new_findings, red.output_tail = [], 0, "Traceback …"
    kept = lean_dump(run)["result"]["rungs"][1]
    assert kept["reason"].startswith("1 test failure")
    assert kept["command_line"] == "python -m pytest tests/test_a.py"
    assert kept["notes"] == ["1 selected: tests/test_a.py changed"]


def _red_status() -> VerifyStatusResult:
    root = "/home/someone/projects/a-project-with-a-long-name"
    spool = f"{root}/.state/agent-habitat/workspaces/a-project-with-a-long-name-0123456789ab/spool"
    message = "tests/test_wrong.py::test_add_is_wrong: AssertionError: two and two"
    reason = f"1 test failure(s), first {message}"
    rung = RungReport(
        rung="test.scoped",
        task="v115633-caf98a.test.scoped",
        state="red",
        reason=reason,
        tool="pytest",
        duration_s=11.265,
        exit_code=1,
        new_findings=1,
        diagnostics=[
            DiagnosticLine(
                file="tests/test_wrong.py",
                line=6,
                code="AssertionError",
                message=message,
                source="pytest",
                text='assert total == 5, "two and two"',
            )
        ],
        notes=["1 selected: tests/test_wrong.py imports calc.arith"],
        command_line=f"{root}/.venv/bin/python -m pytest -q -rfE --color=no "
        f"--junitxml={spool}/verify-v115633-caf98a.test.scoped.xml -o junit_family=xunit1 "
        "tests/test_wrong.py",
        spool=f"{spool}/verify-v115633-caf98a.test.scoped.out",
    )
    green = [
        RungReport(rung="diagnose.files", task="v1.diagnose.files", state="green", tool="ruff"),
        RungReport(rung="compile.project", task="v1.compile.project", state="green", tool="dmypy"),
    ]
    epoch = EpochReport(
        epoch=2,
        task="v115633-caf98a",
        state="red",
        green=False,
        verified_state="red",
        snapshot="d05576e9bc623273",
        head="7f55b5c538a62908f1ecb9627b61997a319cc157",
        policy="standard",
        touched=["src/calc/arith.py", "tests/test_wrong.py"],
        touched_count=2,
        rungs=[*green, rung],
        selection="1 test path(s): tests/test_wrong.py imports calc.arith",
        duration_s=11.28,
        finished_at=1796126205.1308525,
    )
    account = TimeAccount(
        wall_s=40.468,
        active_s=40.468,
        environment_s=38.75,
        blocked_s=39.044,
        reasoning_s=1.424,
        idle_s=0.0,
        calls=4,
    )
    return VerifyStatusResult(
        green=False,
        summary=f"red on d05576e9bc623273: epoch 2 (v115633-caf98a); test.scoped red: {reason}",
        stale=False,
        current_snapshot="d05576e9bc623273",
        epoch=epoch,
        time=TimeReport(
            idle_threshold_s=300, workspace=account, session=account, session_id="mcp-1"
        ),
        served_by="this process (pid 12780)",
    )


def test_the_brief_of_a_red_verify_leaves_out_the_rungs_its_red_stopped() -> None:
    # destr 2.0.5: "red: diagnose.files cancelled, compile.project cancelled, test.scoped red"
    # for a failing vitest that ended the climb while eslint and tsc still ran.
    red = RungReport(rung="test.scoped", task="v1.test.scoped", state="red", tool="vitest")
    stopped = [
        RungReport(
            rung=name, task=f"v1.{name}", state="cancelled", reason="stopped: test.scoped is red"
        )
        for name in ("diagnose.files", "compile.project")
    ]
    epoch = EpochReport(epoch=1, task="v1", state="red", green=False, snapshot="s")
    epoch.rungs, epoch.finished_at = [*stopped, red], 1.0
    run = VerifyRunResult(
        task="v1", epoch=1, snapshot="s", state="red", green=False, summary="red", result=epoch
    )
    assert brief(run) == "red: test.scoped red\n"
    wire = lean_dump(run)["result"]["rungs"]
    assert [(r["rung"], r["state"]) for r in wire][:2] == [
        ("diagnose.files", "cancelled"),
        ("compile.project", "cancelled"),
    ], "the structured content still says they were stopped"
    # A rung cancelled by a person's request is what happened to the verify: it is said.
    epoch.state = run.state = "cancelled"
    epoch.rungs = [stopped[0].model_copy(update={"reason": "cancelled by request"})]
    assert "diagnose.files cancelled" in brief(run)


def test_a_red_status_with_one_failing_test_fits_in_4_kib_text_and_structured() -> None:
    status = _red_status()
    wire = json.dumps(lean_dump(status), separators=(",", ":"), ensure_ascii=False)
    assert len(brief(status).encode()) + len(wire.encode()) <= 4096
    assert 'assert total == 5, \\"two and two\\"' in wire
    assert "tests/test_wrong.py" in wire
    assert "test.scoped.out" in wire  # where the whole log is


def _samples() -> list[tuple[BaseModel, BaseModel | None]]:
    status = _red_status()
    return [
        (run_result(), RunArgs(command="make")),
        (run_result(output="", omitted_bytes=0, exit_code=None, state="running"), None),
        (
            LastResult(
                tab="main",
                index=1,
                command="x",
                state="running",
                running=True,
                exit_code=None,
                output="",
                omitted_bytes=0,
                output_bytes=0,
                cursor=0,
                spool="/s",
            ),
            LastArgs(),
        ),
        (KillResult(tab="t", index=None, killed=False, pids=[], signal="TERM", remaining=[]), None),
        (status, None),
        (status.model_copy(update={"epoch": None, "time": None}), None),
    ]


@pytest.mark.parametrize(("result", "args"), _samples())
def test_a_lean_dump_conforms_to_the_tools_output_schema(
    result: BaseModel, args: BaseModel | None
) -> None:
    args_type = type(args) if args is not None else None
    # Both the full schema of the fields and the lean one `tools/list` publishes.
    for schema in (wire_schema(type(result), args_type), output_schema(type(result), args_type)):
        jsonschema.validate(lean_dump(result, args), schema)


def test_every_verbs_output_schema_keeps_the_models_fields() -> None:
    for row in VERBS:
        schema: dict[str, Any] = wire_schema(row.result, row.args)
        assert schema["properties"] == row.result.model_json_schema()["properties"]
        # Fields no rule can leave out stay required (an index, a state, `green`).
        assert set(schema.get("required", [])) <= set(row.result.model_fields)
    run = wire_schema(run_result().__class__, RunArgs)
    assert {"index", "state", "duration_s"} <= set(run["required"])
    assert "exit_code" not in run["required"]


def _long_failed_run(exit_code: int) -> RunResult:
    # Error lines right beside the core's cut: the wire's own cut takes them out of the body.
    head = "".join(f"ok {i}\n" for i in range(3000)) + "a.c:1: error: in the head's end\n"
    tail = "b.c:2: error: at the tail's start\n" + "".join(f"ok {i}\n" for i in range(3000))
    output = head + "\n… [900 bytes omitted; full output in the spool] …\n" + tail
    return run_result(
        output=output, exit_code=exit_code, error_lines=["m.c:3: error: in the middle"]
    )


def test_error_lines_the_wire_cut_takes_join_the_result_in_their_order() -> None:
    fitted = fit(_long_failed_run(2))
    assert isinstance(fitted, RunResult)
    assert "error" not in fitted.output
    assert fitted.error_lines == [
        "a.c:1: error: in the head's end",
        "m.c:3: error: in the middle",
        "b.c:2: error: at the tail's start",
    ]


def test_a_passing_run_gets_no_error_lines_from_the_cut() -> None:
    fitted = fit(_long_failed_run(0).model_copy(update={"error_lines": []}))
    assert isinstance(fitted, RunResult)
    assert fitted.error_lines == []


def _green_run() -> VerifyRunResult:
    epoch = EpochReport(
        epoch=3, task="v1", state="green", green=True, snapshot="s", policy="standard"
    )
    epoch.rungs = [
        RungReport(rung="diagnose.files", task="v1.diagnose.files", state="green", tool="ruff"),
        RungReport(rung="compile.project", task="v1.compile.project", state="skipped"),
        RungReport(
            rung="test.scoped",
            task="v1.test.scoped",
            state="green",
            tool="pytest",
            notes=["4 selected: tests/test_a.py imports a"],
        ),
    ]
    return VerifyRunResult(
        task="v1", epoch=3, snapshot="s", state="green", green=True, summary="green", result=epoch
    )


def test_a_finished_green_verify_run_is_its_verdict_and_what_it_checked() -> None:
    wire = lean_dump(_green_run())
    assert wire == {
        "epoch": 3,
        "state": "green",
        "green": True,
        "summary": "ruff, pytest 4 selected; not run: compile.project",
    }
    assert brief(_green_run()) == "green\n"
    jsonschema.validate(wire, wire_schema(VerifyRunResult))
    jsonschema.validate(wire, output_schema(VerifyRunResult))


def test_a_green_epoch_that_ran_nothing_says_so() -> None:
    run = _green_run()
    assert run.result is not None
    run.result.rungs = [r for r in run.result.rungs if r.state == "skipped"]
    assert lean_dump(run)["summary"] == "nothing ran; not run: compile.project"


def test_a_green_verdict_names_the_rungs_it_did_not_run_and_why() -> None:
    # wcwidth/destr (a new user's trial): a comment-only edit's green verify_run answered
    # "summary": "ruff", which read as if the type check and the tests had passed.
    run = _green_run()
    assert run.result is not None
    same = "the change is only comments or blank lines"
    run.result.rungs = [
        run.result.rungs[0],
        RungReport(
            rung="compile.project",
            task="v1.compile.project",
            state="skipped",
            reason=f"{same}: the same code and checker directives as HEAD, so no type "
            "finding can be new",
        ),
        RungReport(
            rung="test.scoped",
            task="v1.test.scoped",
            state="skipped",
            reason="no test is affected by the change",
        ),
        RungReport(
            rung="build.affected", task="v1.build.affected", state="skipped", reason=f"{same}: x"
        ),
    ]
    summary = lean_dump(run)["summary"]
    assert summary == (
        f"ruff; not run: compile.project, build.affected ({same}), "
        "test.scoped (no test is affected by the change)"
    ), summary


def test_a_kill_found_by_cgroup_leaves_tracking_out_and_marker_keeps_it() -> None:
    kill = KillResult(tab="t", index=1, killed=True, pids=[5], signal="SIGTERM", remaining=[])
    assert "tracking" not in lean_dump(kill.model_copy(update={"tracking": "cgroup"}))
    marker = kill.model_copy(update={"tracking": "marker", "untracked": "no cgroup here"})
    wire = lean_dump(marker)
    assert (wire["tracking"], wire["untracked"]) == ("marker", "no cgroup here")


def test_nothing_to_verify_is_its_reason_without_a_rung_saying_it_again() -> None:
    # parse 1.20.2, a clean tree: 960 bytes, three skipped rungs each saying "nothing changed
    # since HEAD (give --files or --filter, or climb to test.full)" below the epoch's reason.
    said = "nothing changed since HEAD (give --files or --filter, or climb to test.full)"
    rungs = [
        RungReport(rung=name, task=f"v1.{name}", state="skipped", reason=said, duration_s=0.0)
        for name in ("diagnose.files", "compile.project", "test.scoped")
    ]
    why = "the tree is unchanged since HEAD abc: nothing to verify (give --files or --filter)"
    epoch = EpochReport(
        epoch=1,
        task="v1",
        state="nothing_to_verify",
        green=False,
        snapshot="s",
        head="abc",
        policy="standard",
        rungs=rungs,
        reason=why,
        duration_s=0.1,
        finished_at=1.0,
    )
    run = VerifyRunResult(
        task="v1",
        epoch=1,
        snapshot="s",
        state="nothing_to_verify",
        green=False,
        summary="",
        result=epoch,
    )
    wire = lean_dump(run)
    assert (wire["state"], wire["green"]) == ("nothing_to_verify", False)
    assert wire["result"] == {"reason": why, "duration_s": 0.1}
    jsonschema.validate(wire, output_schema(VerifyRunResult))


def test_a_green_verdict_over_a_test_failing_at_head_too_says_so_in_its_summary() -> None:
    # parse 1.20.2 with a test failing at HEAD: an edit to that test (still failing) was
    # "green" with "ruff, pytest 2 selected", nothing saying a selected test still fails.
    run = _green_run()
    assert run.result is not None
    scoped = run.result.rungs[2]
    scoped.exit_code, scoped.preexisting_findings = 1, 1
    scoped.diagnostics = [
        DiagnosticLine(file="tests/test_b.py", line=4, message="assert 3 == 5", preexisting=True)
    ]
    summary = lean_dump(run)["summary"]
    assert summary.startswith("ruff, pytest 4 selected (1 failing at HEAD too: not red);"), summary
    assert lean_dump(_green_run())["summary"].startswith("ruff, pytest 4 selected;")


def test_a_tool_two_rungs_share_is_named_once_in_the_summary() -> None:
    # fnv 1.0.7: clippy answers diagnose.files and compile.project in one run, and a green
    # said "cargo clippy, cargo clippy, cargo test 3 passed".
    run = _green_run()
    assert run.result is not None
    run.result.rungs[0].tool = "cargo clippy"
    run.result.rungs[1] = RungReport(
        rung="compile.project", task="v1.compile.project", state="green", tool="cargo clippy"
    )
    run.result.rungs[2].tool = "cargo test"
    run.result.rungs[2].notes = ["3 passed, 0 failed"]
    assert lean_dump(run)["summary"] == "cargo clippy, cargo test 3 passed"
