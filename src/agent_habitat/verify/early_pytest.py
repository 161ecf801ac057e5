"""A one-shot verify's warm pytest begun first, before the process imports the ladder.

A one-shot `habitat verify` (no host) spends its first second or two of wall on a loaded
machine importing the habitat (pydantic's models, the ladder: ~0.3 s of CPU), opening the
workspace's state and taking the snapshot; only then does its climb begin the warm pytest
(`rungs/warm_pytest.py`: the project's interpreter importing pytest, another 1-2 s of wall),
and the tests wait for it. Begun here instead, it starts while the rest does: the climb takes
it over when it wants one for the same interpreter, root and environment, and it is stopped
otherwise (`warm_pytest.drop_early`).

What is read here is read without pydantic or the ladder, and only as far as it is plain:
anything this does not read as the climb would (a `[tool.habitat]` it cannot parse, a
`warm_pytest` set to anything but true, in the file or the environment, a policy without
tests, `ci_parity`'s fresh interpreter) begins
nothing, and the climb does as it always did.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..workspace import Workspace

__all__ = ["TESTING_POLICIES", "begin_for_oneshot"]

TESTING_POLICIES = ("standard", "strict")
"""The policies whose climb runs a test rung through a warm pytest (`models.POLICIES`; not
`ci_parity`, which runs pytest fresh, as CI does). A test keeps it the table's."""
_TEST_RUNGS = ("test.scoped", "test.full")


def _habitat_table(root: Path) -> dict[str, Any] | None:
    """`[tool.habitat]` of the project's pyproject.toml ({} when it has none), or None when it
    cannot be read plainly (the climb then reports what is wrong)."""
    try:
        raw = (root / "pyproject.toml").read_bytes()
    except FileNotFoundError:
        return {}
    except OSError:
        return None
    if b"habitat" not in raw:
        return {}  # no `[tool.habitat]` in any spelling: tomllib is not imported
    import tomllib

    try:
        data = tomllib.loads(raw.decode())
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tool = data.get("tool", {})
    table = tool.get("habitat", {}) if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def _python(root: Path, policy: str | None, rungs: list[str] | None) -> Path | None:
    """The project's interpreter a climb with these settings runs its tests in through a warm
    pytest, or None when it would run none, or this cannot tell."""
    table = _habitat_table(root)
    if table is None:
        return None
    ladder = table.get("ladder", {})
    if not isinstance(ladder, dict) or ladder.get("warm_pytest", True) is not True:
        return None
    if "HABITAT_LADDER_WARM_PYTEST" in os.environ:
        return None  # pydantic reads its spellings of a boolean; the climb does
    policy = policy or os.environ.get("HABITAT_POLICY") or table.get("policy", "standard")
    if policy not in TESTING_POLICIES:
        return None
    if rungs and not set(rungs) & set(_TEST_RUNGS):
        return None
    configured = os.environ.get("HABITAT_LADDER_PYTHON") or ladder.get("python")
    if configured is not None and not isinstance(configured, str):
        return None
    from ..errors import ConfigError
    from .environments import resolve_python

    try:
        return resolve_python(root, configured)
    except ConfigError:
        return None


def begin_for_oneshot(root: Path, policy: str | None, rungs: list[str] | None) -> bool:
    """Blocking: begin the warm pytest the one-shot climb of `root` will want (`--policy`,
    `--rung` as given, None when not); whether one was begun."""
    root = root.resolve()  # as the climb resolves it: its folder and its key
    python = _python(root, policy, rungs)
    if python is None:
        return False
    from .rungs.warm_pytest import begin_early

    workspace = Workspace.for_project(root).ensure()
    return begin_early(workspace, python, root)
