"""With a host running, `habitat status` and `habitat cancel` are asked of it with the
standard library alone (`cli.verify_light`, `host/verify_cli.py`), and print what the full
path (the verb called through `reach.client`) prints, with the same exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.cli import main
from agent_habitat.reach import ensure_host, stop_host

pytestmark = pytest.mark.e2e

_PROBE = (
    "import sys\nfrom agent_habitat.cli import main\ncode = main(sys.argv[1:])\n"
    "heavy = ('pydantic', 'anyio', 'rich', 'httpx', 'agent_habitat.habitat', "
    "'agent_habitat.verify.runner.report')\n"
    "print('loaded:', *[n for n in heavy if n in sys.modules], file=sys.stderr)\n"
    "sys.exit(code)"
)
_CALL_TIMEOUT = 120  # a bound for a hung process, not a speed claim

_CASES: list[tuple[str, ...]] = [
    ("status",),
    ("status", "--json"),
    ("cancel",),
    ("cancel", "--json"),
    ("status", "--task", "v-nosuch"),
    ("cancel", "--task=v-nosuch", "--json"),
]
_LIGHT = {0, 1, 2, 3}
"""The cases the host answers alone; an unknown task is refused, and the full path says so."""

_VARYING = [
    (re.compile(r"\d+\.\ds"), "N.Ns"),  # the time account's walls grow between the calls
    (re.compile(r"pid \d+"), "pid N"),
    (re.compile(r"\d+ calls"), "N calls"),
]


def _probe(project: Path, *argv: str) -> tuple[int, str, str, str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv, "--project", str(project)],
        capture_output=True,
        text=True,
        timeout=_CALL_TIMEOUT,
        check=False,
    )
    err, _, loaded = done.stderr.rpartition("loaded:")
    return done.returncode, done.stdout, err, loaded.strip()


def _same_text(text: str) -> str:
    for pattern, fixed in _VARYING:
        text = pattern.sub(fixed, text)
    return text


def _same_json(text: str) -> object:
    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "time"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads(text))


@pytest.mark.timeout(300)
def test_status_and_cancel_print_the_same_through_the_light_path_and_the_full_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    try:
        ensure_host(root)
        light = [_probe(root, *case) for case in _CASES]
        # The full path: the light reader steps aside, so the verbs go through reach.client.
        monkeypatch.setattr("agent_habitat.cli.verify_light.verify_light", lambda argv: None)
        full = []
        for case in _CASES:
            code = main([*case, "--project", str(root)])
            captured = capsys.readouterr()
            full.append((code, captured.out, captured.err))
    finally:
        stop_host(root)
    for i, (case, (l_code, l_out, l_err, loaded), (f_code, f_out, f_err)) in enumerate(
        zip(_CASES, light, full, strict=True)
    ):
        assert l_code == f_code, case
        if "--json" in case and f_out:
            assert _same_json(l_out) == _same_json(f_out), case
        else:
            assert _same_text(l_out) == _same_text(f_out), case
        if "--json" in case and f_err:
            assert json.loads(l_err) == json.loads(f_err), case
        else:
            assert _same_text(l_err) == _same_text(f_err), case
        if i in _LIGHT:
            assert loaded == "", f"{case} loaded {loaded} through the host"
        else:
            assert "v-nosuch" in l_err, (case, l_err)
    codes = [code for code, *_ in light]
    assert codes == [1, 1, 0, 0, 1, 1], light  # never verified: not green
    assert light[0][1].startswith("state=never green=false")
    assert json.loads(light[1][1])["green"] is False
    assert light[2][1].startswith("cancelled=false: ")


def test_the_light_reader_leaves_what_it_does_not_take_to_argparse() -> None:
    from agent_habitat.cli.verify_light import _read

    assert _read(["status", "--json", "--task", "v-1"]) == {
        "command": "status",
        "task": "v-1",
        "json": True,
        "project": None,
    }
    assert _read(["cancel", "--project=/x"]) == {
        "command": "cancel",
        "task": None,
        "json": False,
        "project": "/x",
    }
    for argv in (
        ["status", "--help"],
        ["status", "--task"],
        ["status", "--task", "--json"],
        ["status", "--json", "--json"],
        ["status", "--js"],
        ["cancel", "extra"],
        ["status", "--json=yes"],
    ):
        assert _read(argv) is None, argv
