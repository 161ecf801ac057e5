"""`habitat verify` through a running host with its command line read here, without
argparse, `pathlib` or `cli.common`: the CLI's own part of a verify is then a process start,
this reading and the request (`cli.verify_hosted`).

The reader takes the forms the full parser takes plainly: `--json`, `--background`,
`--wait`, `--policy P`, `--project DIR`, and `--rung`, `--files`, `--filter` with one or
more values (repeatable), each also as `--flag=VALUE`; the flags and their choices come from
`verb_argv.VERIFY_ARGUMENTS`, the copy the full parser is built from. Anything else (help,
`--no-host`, an unknown or abbreviated flag, a bad value, a stray word) is None: the full
path answers it, with argparse's words and exit codes. So is a verify no running host can
take: none runs (the full path may start one, or climb here), the `ci_parity` policy, a
`--project` the full path refuses.

The choice of path (`policy_of`) and the files sent (`files_for_host`) live here, as text,
and the full path (`cli.verify_cmds`) uses the same two functions.
"""

from __future__ import annotations

import os

from .verb_argv import VERIFY_ARGUMENTS

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

__all__ = ["files_for_host", "policy_of", "read_verify", "verify_fast"]

_VALUED: dict[str, dict[str, Any]] = {
    names[0]: spec for names, spec in VERIFY_ARGUMENTS if names[0].startswith("--")
}
"""`--policy` (one value), `--rung`, `--files`, `--filter` (one or more, extending)."""
_SWITCHES = {"--json": "json", "--background": "background", "--wait": "wait"}


def read_verify(argv: list[str]) -> dict[str, Any] | None:
    """`verify …` read as the full parser reads it: the request's fields (`policy`, `rung`,
    `files`, `filter`; None when not given) and `json`, `background`, `project`; or None for
    anything this reader does not take (see the module)."""
    values: dict[str, Any] = {spec["dest"]: None for spec in _VALUED.values()}
    values |= {"json": False, "background": False, "wait": False, "project": None}
    i = 1
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        i += 1
        if name in _SWITCHES and not eq:
            values[_SWITCHES[name]] = True
            continue
        spec = _VALUED.get(name, {"dest": "project"} if name == "--project" else None)
        if spec is None:
            return None  # help, --no-host, `--`, an unknown or abbreviated flag, a stray word
        if eq:
            taken = [value]
        else:
            many = spec.get("nargs") == "+"
            taken = []
            while i < len(argv) and not argv[i].startswith("-") and (many or not taken):
                taken.append(argv[i])
                i += 1
        choices = spec.get("choices")
        if not taken or "" in taken or (choices and any(t not in choices for t in taken)):
            return None  # argparse's error, in its words, on the full path
        if spec.get("nargs") == "+":
            values[spec["dest"]] = [*(values[spec["dest"]] or []), *taken]
        else:
            values[spec["dest"]] = taken[0]
    return values


_CAN_SPELL_CI_PARITY = (b"ci_parity", b"\\u", b"\\U", b"\\\n", b"\\\r", b"\\ ", b"\\\t")
"""What a pyproject.toml must hold to name the `ci_parity` policy: the name itself, or a TOML
escape or line-ending backslash that could spell it. Without any of them it cannot name it,
and `tomllib` (10-30 ms of a loaded machine's import time) is not imported."""


def policy_of(given: str | None, root: str) -> str | None:
    """The policy the verify climbs, as `verify.config.load_policy` reads it, as far as the
    choice of path needs it: `given` (`--policy`), else `HABITAT_POLICY`, else the project's
    pyproject.toml; "standard" stands for any policy but `ci_parity`; None when the
    configuration cannot say (the path that climbs reports the bad key)."""
    if given:
        return given
    if "HABITAT_POLICY" in os.environ:
        return os.environ["HABITAT_POLICY"] or None
    try:
        with open(os.path.join(root, "pyproject.toml"), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return "standard"
    except OSError:
        return None
    if not any(part in raw for part in _CAN_SPELL_CI_PARITY):
        return "standard"  # not ci_parity, whatever else it names (the climb reads it)
    import tomllib

    try:
        data = tomllib.loads(raw.decode())
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tool = data.get("tool")
    habitat = tool.get("habitat") if isinstance(tool, dict) else None
    policy = habitat.get("policy", "standard") if isinstance(habitat, dict) else "standard"
    return policy if isinstance(policy, str) else None


def files_for_host(root: str, files: list[str] | None) -> list[str] | None:
    """`--files` as the host takes them. The host's cwd is not ours: a name the project does
    not have is ours, made absolute as `pathlib` joins it to the cwd (its `.` parts and
    repeated slashes dropped); the runner then refuses one outside the project, naming it."""
    if not files:
        return files
    cwd = os.getcwd()
    return [
        f
        if os.path.exists(os.path.join(root, f)) or os.path.isabs(f)
        else "/".join([cwd.rstrip("/") or "", *(p for p in f.split("/") if p not in ("", "."))])
        for f in files
    ]


def _root(project: str | None) -> str | None:
    if project is None:
        from ..state_place import project_root

        return project_root()
    from ..errors import UsageError
    from ..project_folder import named_project

    try:
        return named_project(project, "--project")
    except UsageError:
        return None  # the full path names the flag


def verify_fast(argv: list[str]) -> int | None:
    """The exit code of `habitat verify …` as a running host answered it, or None when the
    full path must answer (see the module)."""
    call = read_verify(argv)
    if call is None:
        return None
    root = _root(call["project"])
    if root is None or not (call["background"] or policy_of(call["policy"], root) != "ci_parity"):
        return None
    from .verify_hosted import verify_through_host

    body = {spec["dest"]: call[spec["dest"]] for spec in _VALUED.values()}
    body["files"] = files_for_host(root, call["files"])
    return verify_through_host(
        root,
        {k: v for k, v in body.items() if v is not None},
        as_json=call["json"],
        background=call["background"],
        start=False,  # no host runs: the full path starts one (in a terminal) or climbs here
    )
