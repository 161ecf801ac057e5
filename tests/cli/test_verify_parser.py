"""`habitat verify`'s parser needs no ladder: its names are the ladder's own."""

from __future__ import annotations

import subprocess
import sys

from agent_habitat.cli.verify_cmds import POLICY_NAMES, RUNG_NAMES
from agent_habitat.cli.verify_exit import EXIT_CODES, QUEUED
from agent_habitat.verify.models import POLICIES, RUNGS


def test_the_parsers_policy_and_rung_names_are_the_ladders() -> None:
    assert POLICY_NAMES == tuple(POLICIES)
    assert RUNG_NAMES == tuple(RUNGS)


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
        "from agent_habitat.cli.host_wire import live_socket\n"
        "live_socket(pathlib.Path('.'))\n"
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
