"""Which type checker `compile.project` runs and with which flags: the project's own
configuration first (basedpyright, pyright, ty, pyrefly, mypy), else mypy with its defaults — not
strict, and quiet about libraries without type information, so it reports bugs rather
than missing annotations or stubs."""

from __future__ import annotations

import configparser
import importlib.util
import tomllib
from pathlib import Path

from ...regular import open_regular
from ..config import LadderConfig
from ..environments import ProjectEnv

__all__ = [
    "DEFAULT_MYPY_FLAGS",
    "detect_type_checker",
    "install_hint",
    "mypy_available",
    "mypy_configured",
    "version_flags",
]

# mypy without a project configuration: its own defaults (not strict), minus the complaint
# about installed libraries that ship no types (a packaging matter, not a bug here).
DEFAULT_MYPY_FLAGS = ("--disable-error-code", "import-untyped")


def _has_ini_section(path: Path, section: str) -> bool:
    if not path.is_file():
        return False
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except configparser.Error:
        return False
    return parser.has_section(section)


# pyproject.toml path → (its bytes, its `[tool]` tables): every compile.project asks two or
# three times (which checker, is mypy configured, its python_version); reading is cheap, the
# parse is what costs (~10 ms on a busy machine). Keyed by content, not by a timestamp that
# a quick rewrite can leave unchanged.
_TABLES: dict[Path, tuple[bytes, dict[str, object]]] = {}


def _tool_tables(root: Path) -> dict[str, object]:
    path = root / "pyproject.toml"
    try:
        with open_regular(path) as f:
            data = f.read()
        if (hit := _TABLES.get(path)) is not None and hit[0] == data:
            return hit[1]
        tool = tomllib.loads(data.decode("utf-8")).get("tool", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    tables = tool if isinstance(tool, dict) else {}
    _TABLES[path] = (data, tables)
    return tables


def mypy_configured(root: Path) -> bool:
    """The project configures mypy (`[tool.mypy]`, `mypy.ini`, `.mypy.ini`, `setup.cfg`)."""
    return (
        "mypy" in _tool_tables(root)
        or (root / "mypy.ini").is_file()
        or (root / ".mypy.ini").is_file()
        or _has_ini_section(root / "setup.cfg", "mypy")
    )


def mypy_available(env: ProjectEnv) -> bool:
    """mypy can run: from the project's environment, else the habitat's own."""
    return env.has("mypy") or importlib.util.find_spec("mypy") is not None


def detect_type_checker(root: Path, config: LadderConfig, env: ProjectEnv | None = None) -> str:
    """The configured checker, else the one the project's files configure, else mypy with
    its defaults; compileall only when no type checker can run."""
    if config.type_checker != "auto":
        return config.type_checker
    tool = _tool_tables(root)
    if "basedpyright" in tool:
        return "basedpyright"
    if "pyright" in tool or (root / "pyrightconfig.json").is_file():
        return "pyright"
    if "ty" in tool or (root / "ty.toml").is_file():
        return "ty"
    if "pyrefly" in tool or (root / "pyrefly.toml").is_file():
        return "pyrefly"
    if env is not None and not mypy_available(env):
        return "compileall"
    return "mypy"


def version_flags(root: Path, env: ProjectEnv) -> list[str]:
    """`--python-version` of the project's interpreter when the habitat's own mypy (another
    Python) checks it and the project's mypy config does not pin a version."""
    if env.has("mypy") or env.is_habitat_python or not env.version:
        return []
    mypy_table = _tool_tables(root).get("mypy")
    if isinstance(mypy_table, dict) and "python_version" in mypy_table:
        return []
    for name in ("mypy.ini", ".mypy.ini", "setup.cfg"):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(root / name, encoding="utf-8")
        except configparser.Error:
            continue
        if parser.has_option("mypy", "python_version"):
            return []
    return ["--python-version", ".".join(env.version.split(".")[:2])]


def install_hint(env: ProjectEnv, name: str) -> tuple[str, str]:
    """(the command that installs a Node-based checker the project configures, what to know
    about it)."""
    command = f"{env.python} -m pip install {name}"
    if name == "basedpyright":
        return command, "a wheel that brings its own Node"
    return command, "it fetches pyright's Node package on first run; or npm install -g pyright"
