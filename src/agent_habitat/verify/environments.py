"""The project's Python environment, and which tools each rung takes from where.

The project's code, tests and imports always run in the project's interpreter (the
configured one, else `.venv`/`venv`, else the habitat's own). ruff and mypy come from the
project's environment when it has them, else from the habitat's own dependencies (mypy
then pointed at the project's interpreter with `--python-executable`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from ..errors import ConfigError
from ..workspace import write_private
from .command import child_env, run_command

__all__ = ["ProjectEnv", "probe_env", "resolve_python"]

_PROBED_MODULES = ("pytest", "mypy", "ruff", "pip", "pytest_cov")
# The folders of its path, with their mtimes, are read before the modules are looked for:
# a package installed or removed since changes its folder's mtime, and a later verify asks
# again (`_still_true`).
PROBE_FILE = "probe.json"
"""The workspace state file that keeps the interpreter's answers across processes."""
_PROBE = f"""
import importlib.util, json, os, sys
folders = {{p: os.stat(p).st_mtime_ns for p in sys.path if p and os.path.isdir(p)}}
found = {{m: importlib.util.find_spec(m) is not None for m in {list(_PROBED_MODULES)!r}}}
info = {{"version": sys.version.split()[0], "prefix": sys.prefix, "modules": found}}
print("HABITAT-PROBE " + json.dumps({{**info, "folders": folders}}))
"""
# (interpreter path, its mtime) → (env, the probe's answer); the host keeps it across
# climbs while the mtimes of the interpreter's path folders hold (`_still_true`): a venv's
# python is a symlink to the base interpreter, whose mtime no `pip install` moves.
_CACHE: dict[tuple[str, int], tuple[ProjectEnv, dict[str, Any]]] = {}


@dataclass(frozen=True)
class ProjectEnv:
    python: Path
    version: str = ""
    prefix: str = ""
    modules: dict[str, bool] = field(default_factory=dict)

    @property
    def bin_dir(self) -> Path:
        return self.python.parent

    @property
    def label(self) -> str:
        return f"{self.python} (Python {self.version})" if self.version else str(self.python)

    @property
    def is_habitat_python(self) -> bool:
        # Not the interpreter path: two venvs resolve to the same base binary.
        if self.prefix:
            return os.path.realpath(self.prefix) == os.path.realpath(sys.prefix)
        return os.path.realpath(self.python) == os.path.realpath(sys.executable)

    def has(self, module: str) -> bool:
        return self.modules.get(module, False)

    def install_hint(self, package: str) -> str:
        """How to install `package` where the ladder will use it: into the project's
        interpreter; never into the habitat's own, which the ladder falls back to only while
        the project has no environment (a `.venv` made now is the one the next verify uses)."""
        if self.is_habitat_python:
            return (
                f"`python3 -m venv .venv && .venv/bin/python -m pip install {package}` in the "
                f"project, with its own dependencies: an environment of the project's, not the "
                f"habitat's own ({self.python}), which the ladder uses only while the project "
                "has none (.venv once it exists); or point [tool.habitat.ladder].python at an "
                "interpreter that has it"
            )
        if self.modules and not self.has("pip"):  # a uv venv, or one made --without-pip
            return (
                f"`uv pip install --python {self.python} {package}`, or "
                f"`{self.python} -m ensurepip` then `{self.python} -m pip install {package}`"
            )
        return f"{self.python} -m pip install {package}"

    def ruff(self) -> list[str]:
        own = self.bin_dir / "ruff"
        if own.is_file():
            return [str(own)]
        return [_habitat_ruff()]

    def mypy(self, module: str = "mypy") -> tuple[list[str], list[str]]:
        """(argv prefix, extra flags) for `mypy` or `mypy.dmypy`."""
        if self.has("mypy"):
            return [str(self.python), "-m", module], []
        # -P: `-m` would put the working folder (the project root) first on sys.path, and a
        # project named like one of mypy's own dependencies shadowed it (pathspec 0.12.1:
        # every compile.project was `error`, "No module named 'pathspec.patterns.gitignore'").
        return [sys.executable, "-P", "-m", module], ["--python-executable", str(self.python)]


_HABITAT_RUFF: list[str] = []


def _habitat_ruff() -> str:
    """The habitat's own ruff binary, found once while it is there: `find_ruff_bin` walks
    sysconfig's install schemes (2-5 ms of a loaded host's time on every lint)."""
    if _HABITAT_RUFF and os.path.isfile(_HABITAT_RUFF[0]):
        return _HABITAT_RUFF[0]
    from ruff import find_ruff_bin  # type: ignore[import-untyped]  # habitat's own

    _HABITAT_RUFF[:] = [str(find_ruff_bin())]
    return _HABITAT_RUFF[0]


def resolve_python(root: Path, configured: str | None) -> Path:
    """The configured interpreter, else the project's `.venv`/`venv`, else the habitat's."""
    if configured:
        path = Path(configured).expanduser()
        if not path.is_absolute():
            path = root / path if (root / path).exists() else Path(shutil.which(configured) or path)
        if not path.exists():
            raise ConfigError(
                f"[tool.habitat.ladder].python: {configured!r} does not exist; "
                "point it at the project's interpreter"
            )
        return path
    for venv in (".venv", "venv"):
        candidate = root / venv / "bin" / "python"
        if candidate.exists():
            return candidate
    return Path(sys.executable)


async def probe_env(python: Path, spool: Path, kept: Path | None = None) -> ProjectEnv:
    """Ask the interpreter which tools it has (cached per interpreter and mtime). `kept`: a
    state file that keeps the answer across processes (a one-shot verify is one), trusted
    while the interpreter, its `PYTHON*` environment and the mtimes of its path's folders
    are what they were; starting the interpreter took up to a second on a loaded machine."""
    try:
        key = (str(python), (await anyio.Path(python).stat()).st_mtime_ns)
    except OSError as exc:
        raise ConfigError(f"project interpreter {python} is not usable: {exc}") from exc
    cached = _CACHE.get(key)
    if cached is not None and _still_true(cached[1]):
        return cached[0]
    stamp = {"mtime": key[1], "env": _python_env()}
    if kept is not None:
        data = await anyio.to_thread.run_sync(_kept_probe, kept, key[0], stamp)
        if data is not None:
            env = _env_of(python, data)
            _CACHE[key] = (env, data)
            return env
    outcome = await run_command(
        [str(python), "-c", _PROBE],
        cwd=python.parent,
        env=child_env(),
        spool=spool,
        limit_s=60,
        cap=4096,
    )
    await anyio.Path(spool).unlink(missing_ok=True)
    line = next((ln for ln in outcome.text.splitlines() if ln.startswith("HABITAT-PROBE ")), None)
    if outcome.exit_code != 0 or line is None:
        raise ConfigError(
            f"project interpreter {python} did not run (exit {outcome.exit_code}): "
            f"{outcome.tail.strip()[-300:]}; set [tool.habitat.ladder].python"
        )
    data = json.loads(line.removeprefix("HABITAT-PROBE "))
    env = _env_of(python, data)
    _CACHE[key] = (env, data)
    if kept is not None:
        await anyio.to_thread.run_sync(_keep_probe, kept, key[0], {**stamp, "probe": data})
    return env


def _env_of(python: Path, data: dict[str, Any]) -> ProjectEnv:
    return ProjectEnv(
        python=python, version=data["version"], prefix=data["prefix"], modules=data["modules"]
    )


def _python_env() -> dict[str, str]:
    """What of the environment the interpreter reads at start (its path among it)."""
    return {k: v for k, v in sorted(child_env().items()) if k.startswith("PYTHON")}


def _read_kept(kept: Path) -> dict[str, Any]:
    try:
        data = json.loads(kept.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _kept_probe(kept: Path, python: str, stamp: dict[str, Any]) -> dict[str, Any] | None:
    entry = _read_kept(kept).get(python)
    if not isinstance(entry, dict) or {k: entry.get(k) for k in stamp} != stamp:
        return None
    probe = entry.get("probe")
    return probe if isinstance(probe, dict) and _still_true(probe) else None


def _still_true(probe: dict[str, Any]) -> bool:
    folders = probe.get("folders")
    if not isinstance(folders, dict) or not {"version", "prefix", "modules"} <= set(probe):
        return False
    for folder, mtime in folders.items():
        try:
            if os.stat(folder).st_mtime_ns != mtime:
                return False
        except OSError:
            return False
    return True


def _keep_probe(kept: Path, python: str, entry: dict[str, Any]) -> None:
    write_private(kept, json.dumps({**_read_kept(kept), python: entry}))
