"""With a host running, `habitat verify`'s common command lines are read without argparse
(`cli.verify_fast`) and handed to the host: the bytes printed and the exit code are the full
path's (argparse, `cli.verify_cmds`) for nothing to verify, green, red, `--json` and
`--background` (exit 5), and the light path loads neither argparse, `pathlib` nor `json`. Only what
varies between any two verifies is set aside: task ids, epoch numbers, durations and which
parts the time account names."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.reach import ensure_host, stop_host

pytestmark = pytest.mark.e2e

_PROBE = (
    "import sys\n"
    "if sys.argv[1] == 'full':\n"
    "    import agent_habitat.cli.verify_fast as fast\n"
    "    fast.verify_fast = lambda argv: None  # the full path: argparse and verify_cmds\n"
    "from agent_habitat.cli import main\n"
    "code = main(sys.argv[2:])\n"
    "sys.stdout.flush()\n"
    # `json` (with `re` and `enum`): 11 of the 31 ms of CPU of a `--json` verify's CLI.
    "heavy = ('argparse', 'pathlib', 'pydantic', 'agent_habitat.cli.common', 'json')\n"
    # Under `make test` coverage starts in this process at its first module of ours
    # (tests/habitat_coverage_tools.py) and imports pathlib and json itself: not the CLI's
    # doing, and without coverage (pytest alone) the check sees the CLI's imports only.
    "if 'coverage' in sys.modules:\n"
    "    heavy = tuple(n for n in heavy if n not in ('pathlib', 'json'))\n"
    "print('loaded:', *[n for n in heavy if n in sys.modules], file=sys.stderr)\n"
    "sys.exit(code)"
)
_CALL_TIMEOUT = 120  # a bound for a hung process, not a speed claim

_VARYING = [
    (re.compile(rb"v\d{6}-[0-9a-f]+"), b"TASK"),  # each verify is its own task
    (re.compile(rb"\d+\.\d+ ?s\b"), b"N.Ns"),  # durations
    (re.compile(rb"epoch \d+"), b"epoch N"),
    (re.compile(rb'"epoch": \d+'), b'"epoch": 0'),
    # A `--background` ticket: whether the runner began its epoch before the answer left,
    # and whether the previous call's epoch was still young enough to take this one in.
    (re.compile(rb'"state": "(?:queued|running)"'), b'"state": "queued or running"'),
    (re.compile(rb'"summary": "(?:queued|running): '), b'"summary": "queued or running: '),
    (re.compile(rb'"coalesced": (?:true|false)'), b'"coalesced": null'),
    # The time account: which parts it names (warm-up, queue) depends on the host's timing.
    (re.compile(rb"(?m)^waited .*\n"), b"waited ...\n"),
]


def _verify(path: str, root: Path, *argv: str) -> tuple[int, bytes, bytes, str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, path, "verify", *argv, "--project", str(root)],
        capture_output=True,
        timeout=_CALL_TIMEOUT,
        check=False,
    )
    err, _, loaded = done.stderr.rpartition(b"loaded:")
    return done.returncode, done.stdout, err, loaded.decode().strip()


def _same(out: bytes) -> object:
    for pattern, fixed in _VARYING:
        out = pattern.sub(fixed, out)
    if not out.startswith(b"{"):
        return out

    def strip(value: object) -> object:  # walls and durations: keys named `…_s`
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if not k.endswith("_s")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads(out))


def _edit(root: Path, line: str) -> None:
    text = root / "src/calc/text.py"
    text.write_text(text.read_text(encoding="utf-8") + line, encoding="utf-8")


_MINIMAL = ("--policy", "minimal")
_STEPS: list[tuple[str | None, list[tuple[tuple[str, ...], int]]]] = [
    (None, [((), 4), (("--json",), 4)]),  # a clean tree: nothing to verify
    (
        "# a comment\n",
        [
            (_MINIMAL, 0),
            (("--policy=minimal", "--json"), 0),
            (("--rung", "diagnose.files", "--files", "src/calc/text.py"), 0),
        ],
    ),
    ("import os\n", [(_MINIMAL, 1), (("--json", *_MINIMAL), 1)]),  # F401: red
    (None, [(("--background", *_MINIMAL), 5), (("--background", "--json", *_MINIMAL), 5)]),
]


@pytest.mark.timeout(600)
def test_verify_prints_the_same_through_the_light_reader_and_the_full_parser(
    tmp_path: Path,
) -> None:
    root = build_sample(tmp_path / "calc")
    try:
        ensure_host(root)
        runs = []
        for edit, cases in _STEPS:
            if edit is not None:
                _edit(root, edit)
            for argv, code in cases:
                light = _verify("light", root, *argv)
                full = _verify("full", root, *argv)
                runs.append((argv, code, light, full))
    finally:
        stop_host(root)
    for argv, code, (l_code, l_out, l_err, loaded), (f_code, f_out, f_err, f_loaded) in runs:
        assert (l_code, f_code) == (code, code), (argv, l_out, l_err, f_out, f_err)
        assert _same(l_out) == _same(f_out), argv
        assert l_err == f_err == b"", argv
        assert loaded == "", f"verify {argv} loaded {loaded} through the host"
        assert "argparse" in f_loaded.split(), argv  # the comparison is with the full path


def test_the_reader_takes_the_plain_forms_and_leaves_the_rest_to_argparse() -> None:
    from agent_habitat.cli.verify_fast import read_verify

    line = "verify --rung diagnose.files test.scoped --files=a.py --json --files b.py c.py"
    read = read_verify([*line.split(), "--policy", "strict", "--project", "/x", "--wait"])
    assert read == {
        "policy": "strict",
        "rung": ["diagnose.files", "test.scoped"],
        "files": ["a.py", "b.py", "c.py"],
        "filter": None,
        "json": True,
        "background": False,
        "wait": True,
        "project": "/x",
    }
    assert read_verify(["verify", "--filter", "-k parser"]) is None  # argparse's own rules
    for argv in (
        ["verify", "--help"],
        ["verify", "-h"],
        ["verify", "--no-host"],
        ["verify", "--policy", "fast"],
        ["verify", "--policy"],
        ["verify", "--rung", "lint"],
        ["verify", "--files"],
        ["verify", "--files="],
        ["verify", "--files", "--json"],
        ["verify", "--json=yes"],
        ["verify", "--jso"],
        ["verify", "extra"],
        ["verify", "--policy", "minimal", "extra"],
        ["verify", "--", "--json"],
    ):
        assert read_verify(argv) is None, argv


def test_files_are_sent_as_the_full_path_sends_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_habitat.cli.verify_fast import files_for_host

    (tmp_path / "a.py").write_text("")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    given = ["a.py", "b.py", "./c//d/.", "../e.py", "/abs.py"]
    pathlib_made = [
        f if (tmp_path / f).exists() or Path(f).is_absolute() else str(Path.cwd() / f)
        for f in given
    ]
    assert files_for_host(str(tmp_path), given) == pathlib_made
    assert pathlib_made[1] == str(tmp_path / "sub" / "b.py")
