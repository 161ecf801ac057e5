"""`habitat status` and `habitat cancel` answered by the running host, with the standard
library alone.

The command line is read here (`--task`, `--json`, `--project`; anything else goes to the
full path, which has argparse's words for it), sent to the host's `/api/verify/cli`
(`host/verify_cli.py`) over its socket, and the host's answer printed as it came: the host
renders it with `verify.runner.cli_text`, the writer the full path uses, so the text, the
JSON and the exit code are the same either way. None means "take the full path": no host
runs, the state folder is not safe, the host is gone, or it refused (the full path then
says why in its own words; a refusal did nothing, so asking again is safe).
"""

from __future__ import annotations

import os
import sys

from ..reach.plain_client import HostGone, StateNotSafe, host_of

__all__ = ["verify_light"]

_ROUTE = "/api/verify/cli"  # host/verify_cli.py (not imported: it brings starlette)
_ANSWER_SECONDS = 60.0
_VALUED = ("--task", "--project")


def _read(argv: list[str]) -> dict[str, object] | None:
    """{"command", "task", "json", "project"} from `status|cancel …`, or None for anything
    this reader does not take (help, an unknown or repeated flag, a missing value)."""
    command, *rest = argv
    seen: dict[str, object] = {"command": command, "task": None, "json": False, "project": None}
    given: set[str] = set()
    words = iter(rest)
    for word in words:
        name, eq, value = word.partition("=")
        if name in given:
            return None
        given.add(name)
        if name == "--json" and not eq:
            seen["json"] = True
        elif name in _VALUED:
            if not eq:
                value = next(words, "")
                if not value or value.startswith("-"):
                    return None
            seen[name[2:]] = value
        else:
            return None
    return seen


def _root(project: object) -> str | None:
    if project is not None:
        folder = str(project)
        # Not a folder: the full path names the flag.
        return os.path.realpath(folder) if os.path.isdir(folder) else None
    from ..state_place import project_root  # as text: this path has no use for `pathlib`

    return project_root()


def verify_light(argv: list[str]) -> int | None:
    """The exit code of `habitat status|cancel …` as the running host answered it, or None
    when the full path must answer."""
    call = _read(argv)
    if call is None:
        return None
    project = call.pop("project")
    root = _root(project)
    if root is None:
        return None
    try:
        host = host_of(root)
        if host is None:
            if call["command"] == "status":
                from .status_quiet import quiet_status  # the record read here, if it can be

                return quiet_status({**call, "project": project})
            from .verify_quiet import quiet_cancel  # nothing serving verify: known here

            return quiet_cancel({**call, "project": project})
        answer = host.ask("POST", _ROUTE, call, timeout=_ANSWER_SECONDS)
    except (StateNotSafe, HostGone):
        return None
    except KeyboardInterrupt:
        return 130
    data = answer.data
    if answer.status != 200 or not isinstance(data, dict):
        return None
    text, code = data.get("stdout"), data.get("code")
    if not isinstance(text, str) or not isinstance(code, int):
        return None
    sys.stdout.write(text)
    return code
