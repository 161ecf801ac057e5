"""The interpreter the tests' projects run in, as a user's project runs in its own `.venv`.

A project's own pytest (the test rungs, the warm pytest, the testdeps plugin's recording)
runs in the project's interpreter, which the tests left to the habitat's own, the dev venv.
There it loaded every pytest plugin the dev venv installs by entry point (xdist, timeout,
hypothesis, anyio, pytest-cov) and started coverage (the audit hook of
tests/habitat_coverage_tools.py fires on the testdeps plugin's file): 0.74-0.78 CPU s a run
where this venv's takes 0.27-0.29, and a whole run of the suite starts over a hundred of
them, besides its warm pytests (0.42 → 0.15 CPU s each to start). Coverage measured nothing
there: `source = ["agent_habitat"]` names a package, which coverage matches by module name,
and the habitat's code in those processes runs as `habitat_testdeps` (a plugin from its own
folder) and `__main__` (the warm pytest's zygote), so each wrote a data file of no files.

`make test` builds the venv once (`python tests/project_venv.py DIR`): `python -m venv`
(with pip, as a user's is) and pytest at the dev venv's version, nothing else. The root
conftest hands it to the suite as `HABITAT_LADDER_PYTHON` (the `[tool.habitat.ladder]
python` a user can set in the environment) when it exists; a test that needs another
interpreter, or the project's own `.venv`, sets or removes the variable itself.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["DEFAULT", "PACKAGES", "build", "interpreter", "python"]

_ROOT = Path(__file__).resolve().parent.parent
DEFAULT = _ROOT / ".venv" / "project"
PACKAGES = ("pytest",)
"""What the projects' tests and the testdeps plugin need (pytest's dependencies come along)."""
_STAMP = ".installed"


def python(venv: Path = DEFAULT) -> Path | None:
    """The venv's interpreter once `build` finished, else None."""
    return venv / "bin" / "python" if (venv / _STAMP).is_file() else None


def interpreter() -> str:
    """The interpreter a test runs a project's own pytest in, as the ladder would: this venv's
    once built, else the habitat's own (the dev venv's, with its plugins and coverage)."""
    return str(python() or sys.executable)


def build(venv: Path) -> None:
    """`venv` made anew: the packages, and what they pull in, at the versions this
    interpreter (the dev venv's) has."""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    constraints = venv / "constraints.txt"
    constraints.write_text(
        "".join(
            f"{dist.metadata['Name']}=={dist.version}\n"
            for dist in metadata.distributions()
            if dist.metadata["Name"] and dist.metadata["Name"] != "agent-habitat"
        ),
        encoding="utf-8",
    )
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run(
        [*pip, "--disable-pip-version-check", "-c", str(constraints), *PACKAGES], check=True
    )
    (venv / _STAMP).touch()


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
