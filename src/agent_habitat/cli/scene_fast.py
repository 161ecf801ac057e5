"""`habitat scene` at once: the table read straight from `state.db` when nothing needs doing,
or asked of the workspace host over its socket when one serves the workspace (`host_scene`).

A scene through `Habitat.open` builds every service of the workspace (the verify record,
the accounting, the pydantic models of every verb) to read two tables. Most of the time
there is nothing else to do: no host serves the workspace, no run is marked running (so
none can have ended unseen and need recording), the state is at this habitat's schema and
no configuration changes the caps. Then this module answers from the database alone
(`shell.quiet_scene`, the core's reader), with the same table (`cli.scene_view`), or with
`--json` the same JSON, output previews included (`quiet_scene_data`). In every other case —
and for `--json` when a host serves the workspace — it returns None and the scene takes the
full path (or the host's answer), which does whatever the state needs and reports any error.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from pathlib import Path

    from .scene_view import SceneLike

__all__ = ["RUNNER_CONFIG_FIELDS", "SHELL_CONFIG_DEFAULTS", "configured", "fast_scene"]

SHELL_CONFIG_DEFAULTS = {
    "max_tabs": 8,
    "history_rows": 50,
    "output_cap_bytes": 16 * 1024,
    "preview_bytes": 2 * 1024,
    "kill_grace_seconds": 2.0,
    "long_run_nice": 5,
    "journal_limit": 10_000,
    "spool_run_budget_bytes": 256 * 1024 * 1024,
    "spool_workspace_budget_bytes": 2 * 1024 * 1024 * 1024,
}
"""`config.ShellConfig`'s fields and defaults (a test keeps them equal): a `HABITAT_<FIELD>`
variable sends the scene the full way, which validates it."""
RUNNER_CONFIG_FIELDS = ("coalesce_seconds", "idle_seconds")
"""`verify.runner.config.RunnerConfig`'s fields, which opening the habitat validates too (a
test keeps them equal)."""


def _project(argv: list[str]) -> tuple[bool, str | None]:
    """`scene`, `scene --project DIR` or `scene --project=DIR` (`--json` aside); (False, None)
    for any other command line (flags, help, mistakes: the full parser answers those)."""
    rest = [arg for arg in argv[1:] if arg != "--json"]
    if len(rest) < len(argv) - 2:
        return False, None  # `--json` twice: argparse takes it, this does not need to
    if not rest:
        return True, None
    if len(rest) == 2 and rest[0] == "--project":
        return True, rest[1]
    if len(rest) == 1 and rest[0].startswith("--project="):
        return True, rest[0].removeprefix("--project=")
    return False, None


def configured(root: Path | str) -> bool:
    """True when configuration may change the scene's caps or make the full path refuse."""
    names = (*SHELL_CONFIG_DEFAULTS, *RUNNER_CONFIG_FIELDS)
    if any(f"HABITAT_{name.upper()}" in os.environ for name in names):
        return True
    if os.environ.get("HABITAT_RUN_CGROUPS", "") not in ("", "0", "1"):
        return True  # the full path refuses it (`config.RUN_CGROUPS_VALUES`)
    pyproject = os.path.join(root, "pyproject.toml")
    if not os.path.isfile(pyproject):
        return os.path.exists(pyproject)  # a folder or a FIFO: the full path says what it is
    import tomllib

    try:
        with open(pyproject, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return True
    tool = data.get("tool")
    if tool is None:
        return False  # no [tool] table: `config.load_pyproject` finds nothing either
    return not isinstance(tool, dict) or "habitat" in tool


def _host_lock(root: str) -> str | None:
    """The host's lock file when a host may serve the workspace: a running host keeps its
    record there and empties it on the way out (a dead one's record: `host_scene` checks)."""
    from .. import state_place
    from ..reach.plain_client import LOCK_NAME

    lock = os.path.join(state_place.state_dir(root), LOCK_NAME)
    try:
        return lock if os.stat(lock).st_size > 0 else None
    except FileNotFoundError:
        return None


def fast_scene(argv: list[str]) -> int | None:
    """Print the scene and return 0, or None when the full path must answer."""
    from .. import state_place
    from ..errors import HabitatError

    plain, project = _project(argv)
    if not plain:
        return None
    try:
        if project is not None and not os.path.isdir(project):
            return None  # the full path names the bad flag
        root = os.path.realpath(project) if project is not None else state_place.project_root()
        lock = _host_lock(root)
        if "--json" in argv:
            return None if lock is not None else _quiet_scene(root, as_json=True)
        if lock is not None:
            # What the host knows (its configuration, its runs): asked of the host itself.
            from .host_scene import host_scene

            return _print(host_scene(lock), root)
        return _quiet_scene(root)
    except (OSError, HabitatError):
        return None


def _quiet_scene(root_text: str, *, as_json: bool = False) -> int | None:
    """No host: the scene read from `state.db`, when nothing needs doing."""
    from pathlib import Path

    from ..errors import HabitatError
    from ..shell.quiet_scene import QuietCaps, read_quiet_scene
    from ..workspace import Workspace, habitat_home, refuse_unsafe

    root = Path(root_text)
    try:
        if configured(root):
            return None
        workspace = Workspace.for_project(root)
        db = workspace.db_path
        # Another user's state folder: the full path refuses it and says why.
        for path in (habitat_home(), workspace.state_dir, db):
            if path.exists():
                refuse_unsafe(path)
        caps = QuietCaps(
            max_tabs=int(SHELL_CONFIG_DEFAULTS["max_tabs"]),
            history_rows=int(SHELL_CONFIG_DEFAULTS["history_rows"]),
            output_cap_bytes=int(SHELL_CONFIG_DEFAULTS["output_cap_bytes"]),
        )
        scene = read_quiet_scene(db, caps) if db.is_file() else None
        if scene is not None and as_json:
            from ..shell.quiet_scene import quiet_scene_data

            data = quiet_scene_data(scene, int(SHELL_CONFIG_DEFAULTS["preview_bytes"]))
            if data is None:
                return None
            from .shell_views import emit_json_data

            emit_json_data(data)
            return 0
    except (OSError, HabitatError):
        return None
    return _print(scene, root)


def _print(scene: SceneLike | None, root: Path | str) -> int | None:
    if scene is None:
        return None
    from .scene_view import print_scene

    print_scene(scene, str(root))
    return 0
