"""`habitat verify`'s parser needs no ladder: its flags are a copy of what `verify_run`'s
args model derives, kept equal here."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from agent_habitat.cli import build_parser
from agent_habitat.cli.flags import argument_specs
from agent_habitat.cli.verb_argv import VERIFY_ARGUMENTS, VERIFY_LEFT_OUT
from agent_habitat.cli.verify_exit import EXIT_CODES, QUEUED
from agent_habitat.verbs import verb
from agent_habitat.verify.models import POLICIES, RUNGS


def _named(spec: dict[str, Any]) -> dict[str, Any]:
    return {k: v.__name__ if isinstance(v, type) else v for k, v in spec.items()}


def test_the_verify_flags_are_what_the_verify_run_args_model_derives() -> None:
    derived = [
        (names, _named(spec))
        for names, spec in argument_specs(verb("run", "verify"))
        if spec["dest"] not in VERIFY_LEFT_OUT
    ]
    assert derived == VERIFY_ARGUMENTS, "update cli/verb_argv.VERIFY_ARGUMENTS to what it derives"
    choices = {spec["dest"]: spec.get("choices") for _, spec in VERIFY_ARGUMENTS}
    assert choices["policy"] == list(POLICIES)
    assert choices["rung"] == list(RUNGS)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--files", "a.py", "b.py"], {"files": ["a.py", "b.py"]}),
        (["--files", "a.py", "--files", "b.py"], {"files": ["a.py", "b.py"]}),
        (
            ["--rung", "test.scoped", "--filter", "-k parser"],
            {"rung": ["test.scoped"], "filter": ["-k parser"]},
        ),
        (["--policy", "strict", "--wait"], {"policy": "strict", "rung": None}),
    ],
)
def test_the_verify_command_line_reads_into_the_models_fields(
    argv: list[str], expected: dict[str, Any]
) -> None:
    ns = build_parser("verify").parse_args(["verify", *argv])
    for field, value in expected.items():
        assert getattr(ns, field) == value


def test_a_rung_the_ladder_does_not_have_is_refused_naming_the_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        build_parser("verify").parse_args(["verify", "--rung", "test.everything"])
    assert "diagnose.files" in capsys.readouterr().err


def test_every_verdict_has_an_exit_code_and_queued_is_never_green() -> None:
    from typing import get_args

    from agent_habitat.verify.models import LadderState

    assert set(get_args(LadderState)) <= set(EXIT_CODES)
    assert QUEUED == 5
    assert EXIT_CODES["green"] == 0
    assert all(code != 0 for state, code in EXIT_CODES.items() if state != "green")


def test_the_path_to_the_host_imports_neither_pydantic_nor_the_ladder() -> None:
    # What `habitat verify` loads before it knows whether a host serves the workspace.
    code = (
        "import sys\n"
        "from agent_habitat.cli import build_parser\n"
        "import pathlib\n"
        "import agent_habitat.cli.verify_hosted\n"
        "from agent_habitat.reach.plain_client import host_of\n"
        "host_of(pathlib.Path('.'))\n"
        "build_parser('verify').parse_args(['verify', '--policy', 'minimal'])\n"
        "heavy = [m for m in ('pydantic', 'rich', 'httpx2', 'anyio', 'agent_habitat.verify',"
        " 'starlette', 'psutil')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""
