"""Where a project keeps its packages and its tests, and the module name of a file."""

from __future__ import annotations

import configparser
import fnmatch
import functools
import os
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from .config import LadderConfig

__all__ = ["MANIFESTS", "Layout", "discover_layout", "is_manifest", "is_test_file"]

# Files whose change means the project's dependencies may have changed.
MANIFESTS = (
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "uv.lock",
    "poetry.lock",
    "pdm.lock",
    "Pipfile",
    "Pipfile.lock",
)
_NOT_PACKAGES = frozenset(
    {"tests", "test", "testing", "docs", "doc", "bench", "benchmarks", "examples", "scripts"}
)
# Files at the top of a flat layout that are the project's tooling, not a module it ships.
_NOT_MODULES = frozenset({"setup", "conftest", "noxfile", "fabfile"})
_SKIP_DIRS = frozenset(
    {"__pycache__", "node_modules", "build", "dist", "venv", "site-packages", "htmlcov"}
)


_DEFAULT_TEST_FILES = ("test_*.py", "*_test.py")
"""pytest's default `python_files`."""


def is_manifest(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name in MANIFESTS or (name.startswith("requirements") and name.endswith((".txt", ".in")))


def is_test_file(rel: str, patterns: tuple[str, ...] = _DEFAULT_TEST_FILES) -> bool:
    """Whether pytest collects `rel` as a test module under `python_files` = `patterns`
    (a pattern with a `/` matches the path's end, else the file's name, as pytest's does)."""
    if not rel.endswith(".py"):
        return False
    name = rel.rsplit("/", 1)[-1]
    return any(
        fnmatch.fnmatchcase("/" + rel, "*/" + pat) if "/" in pat else fnmatch.fnmatchcase(name, pat)
        for pat in patterns
    )


@dataclass(frozen=True)
class Layout:
    root: Path
    packages: dict[str, Path]
    """Top-level import name → its package directory."""
    test_roots: list[Path]
    is_python: bool
    test_patterns: tuple[str, ...] = _DEFAULT_TEST_FILES
    """pytest's `python_files`: which `.py` files are test modules (`is_test`)."""
    doctest_modules: bool = False
    """pytest runs with `--doctest-modules` (its addopts): every module is a test too."""
    doctest_files: dict[str, Path] = field(default_factory=dict)
    """Text files pytest collects as doctests (`--doctest-glob`, default `test*.txt`) under
    the test roots, packages included, keyed by relative posix path: tests whose imports are
    their examples' (side_graph.py)."""
    side_files: dict[str, Path] = field(default_factory=dict)
    """`.py` files under the test roots but outside the packages (tests, conftests, helpers),
    keyed by relative posix path."""
    modules: dict[str, Path] = field(default_factory=dict)
    """Top-level single-file modules (`parse.py` beside `pyproject.toml`, or in `src/`): a
    project's code as much as its packages' (setuptools `py-modules`, flit's module), which
    the type check covers; test selection reaches them as side files."""

    def is_test(self, rel: str) -> bool:
        """Whether pytest collects `rel` as a test module (the project's `python_files`)."""
        return rel in self.doctest_files or is_test_file(rel, self.test_patterns)

    @functools.cached_property
    def doctest_sources(self) -> frozenset[str]:
        """With `--doctest-modules`, the project's own `.py` files (relative posix paths):
        pytest collects each one's docstring examples, tests that run its code."""
        if not self.doctest_modules:
            return frozenset()
        files = {self.rel(p) for pkg in self.packages.values() for p in _walk_py(pkg, set())}
        return frozenset(files | self.module_files)

    def runs_as_test(self, rel: str) -> bool:
        """Whether pytest collects tests from `rel`: a test module, a doctest text file, or
        (`--doctest-modules`) a module of the project's own."""
        return self.is_test(rel) or rel in self.doctest_sources

    @property
    def module_files(self) -> set[str]:
        """The relative paths of the single-file modules (`modules`)."""
        return {p.relative_to(self.root).as_posix() for p in self.modules.values()}

    @property
    def source_roots(self) -> list[Path]:
        return sorted({p.parent for p in self.packages.values()})

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def module_of(self, rel: str) -> str | None:
        """The module name of a package file, or None when it is not in a package."""
        if not rel.endswith((".py", ".pyi")):
            return None
        path = self.root / rel
        for name, pkg_dir in self.packages.items():
            try:
                parts = list(path.relative_to(pkg_dir).with_suffix("").parts)
            except ValueError:
                continue
            if parts and parts[-1] == "__init__":
                parts.pop()
            return ".".join([name, *parts])
        return None

    def file_of(self, module: str) -> Path | None:
        top, _, rest = module.partition(".")
        base = self.packages.get(top)
        if base is None:
            return None
        target = base.joinpath(*rest.split(".")) if rest else base
        for candidate in (target.with_suffix(".py"), target / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def in_test_roots(self, rel: str) -> bool:
        path = self.root / rel
        return any(path == r or r in path.parents for r in self.test_roots)


def _find_packages(root: Path, config: LadderConfig) -> dict[str, Path]:
    bases = [root / "src", root] if (root / "src").is_dir() else [root]
    if config.packages is not None:
        found: dict[str, Path] = {}
        for name in config.packages:
            hit = next((b / name for b in bases if (b / name / "__init__.py").is_file()), None)
            if hit is None:
                raise ConfigError(
                    f"[tool.habitat.ladder].packages: no package {name!r} under "
                    f"{' or '.join(str(b) for b in bases)}; fix the name or remove the key"
                )
            found[name] = hit
        return found
    base = bases[0]
    return {
        d.name: d
        for d in sorted(base.iterdir())
        if d.is_dir()
        and (d / "__init__.py").is_file()
        and d.name not in _NOT_PACKAGES
        and not d.name.startswith((".", "_"))
        and d.name.isidentifier()
    }


def _find_modules(
    root: Path, config: LadderConfig, packages: dict[str, Path], tests: tuple[str, ...]
) -> dict[str, Path]:
    if config.packages is not None:  # the project said which code is its own
        return {}
    base = root / "src" if (root / "src").is_dir() else root
    return {
        p.stem: p
        for p in sorted(base.glob("*.py"))
        if p.is_file()
        and p.stem.isidentifier()
        and not p.stem.startswith("_")
        and p.stem not in _NOT_MODULES
        and p.stem not in packages
        and not is_test_file(p.name, tests)
    }


def _ini_list(value: object) -> list[str] | None:
    """A pytest `args`/`linelist` value: a TOML list, or a string split on whitespace."""
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        return value.split()
    return None


def _pytest_ini(root: Path) -> dict[str, object]:
    """The pytest options of the one file pytest reads them from, in its order: `pytest.ini`
    (even without the section), `.pytest.ini`, `pyproject.toml` (`[tool.pytest.ini_options]`,
    else pytest 9's `[tool.pytest]`), `tox.ini` `[pytest]`, `setup.cfg` `[tool:pytest]`."""
    for name, section in (("pytest.ini", "pytest"), (".pytest.ini", "pytest")):
        if (root / name).is_file():
            return _ini_section(root / name, section)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            with open(pyproject, "rb") as f:
                data = tomllib.load(f)
        except tomllib.TOMLDecodeError:
            data = {}
        table = data.get("tool", {}).get("pytest")
        if isinstance(table, dict):
            ini = table.get("ini_options")
            return dict(ini) if isinstance(ini, dict) else table
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        options = _ini_section(root / name, section) if (root / name).is_file() else None
        if options:
            return options
    return {}


def _addopts(ini: dict[str, object]) -> list[str]:
    opts = ini.get("addopts")
    try:
        return shlex.split(opts) if isinstance(opts, str) else _ini_list(opts) or []
    except ValueError:
        return []


def _doctest_globs(args: list[str]) -> tuple[str, ...]:
    """The `--doctest-glob` patterns of pytest's `addopts` (pytest's default: `test*.txt`)."""
    globs: list[str] = []
    for i, arg in enumerate(args):
        if arg.startswith("--doctest-glob="):
            globs.append(arg.partition("=")[2])
        elif arg == "--doctest-glob" and i + 1 < len(args):
            globs.append(args[i + 1])
    return tuple(globs) or ("test*.txt",)


def _plugin_off(args: list[str], name: str) -> bool:
    """Whether `args` turn pytest's plugin `name` off (`-p no:NAME`, `-pno:NAME`)."""
    off = f"no:{name}"
    return any(
        a == f"-p{off}" or (a == "-p" and i + 1 < len(args) and args[i + 1] == off)
        for i, a in enumerate(args)
    )


def _walk_doctests(top: Path, globs: tuple[str, ...]) -> list[Path]:
    out: list[Path] = []
    if not globs:
        return out
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        dirnames[:] = [
            d
            for d in dirnames
            if not d.startswith(".")
            and d not in _SKIP_DIRS
            and not (here / d / "pyvenv.cfg").is_file()
        ]
        out.extend(
            here / f
            for f in sorted(filenames)
            if not f.endswith(".py") and any(fnmatch.fnmatchcase(f, g) for g in globs)
        )
    return out


def _ini_section(path: Path, section: str) -> dict[str, object]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except configparser.Error:
        return {}
    return dict(parser.items(section)) if parser.has_section(section) else {}


def _walk_py(top: Path, exclude: set[Path]) -> list[Path]:
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".")
            and d not in _SKIP_DIRS
            and here / d not in exclude
            and not (here / d / "pyvenv.cfg").is_file()  # a virtualenv, whatever its name
        )
        out.extend(here / f for f in sorted(filenames) if f.endswith(".py"))
    return out


def _is_python_project(
    root: Path, packages: dict[str, Path], side: dict[str, Path], tests: tuple[str, ...]
) -> bool:
    if packages or (root / "setup.py").is_file() or (root / "setup.cfg").is_file():
        return True
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        with open(pyproject, "rb") as f:
            data = tomllib.load(f)
        if "project" in data or "poetry" in data.get("tool", {}):
            return True
    return any(is_test_file(rel, tests) for rel in side)


def discover_layout(root: Path, config: LadderConfig) -> Layout:
    """Blocking (walks the tree); call it from a worker thread in async code."""
    root = root.resolve()
    packages = _find_packages(root, config)
    ini = _pytest_ini(root)
    paths = config.test_paths if config.test_paths is not None else _ini_list(ini.get("testpaths"))
    tests = tuple(_ini_list(ini.get("python_files")) or _DEFAULT_TEST_FILES)
    test_roots = [(root / p).resolve() for p in paths] if paths else [root]
    exclude = set(packages.values())
    side: dict[str, Path] = {}
    doctests: dict[str, Path] = {}
    addopts = _addopts(ini)
    doctest_off = _plugin_off(addopts, "doctest")
    globs = () if doctest_off else _doctest_globs(addopts)
    for test_root in test_roots:
        if test_root.is_file():
            side[test_root.relative_to(root).as_posix()] = test_root
            continue
        if test_root.is_dir():
            for path in _walk_py(test_root, exclude):
                side[path.relative_to(root).as_posix()] = path
            for path in _walk_doctests(test_root, globs):
                doctests[path.relative_to(root).as_posix()] = path
    return Layout(
        root=root,
        packages=packages,
        test_roots=test_roots,
        is_python=_is_python_project(root, packages, side, tests),
        test_patterns=tests,
        side_files=side,
        doctest_files=doctests,
        doctest_modules="--doctest-modules" in addopts and not doctest_off,
        modules=_find_modules(root, config, packages, tests),
    )
