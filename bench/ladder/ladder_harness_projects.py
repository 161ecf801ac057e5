"""The real projects of the ladder harness, prepared once in a cache folder.

Each comes from its sdist on PyPI (`pip download --no-binary :all: --no-deps NAME==VER`),
unpacked with tarfile's `data` filter into `<cache>/work/<name>`, committed to a fresh git
repository, with a venv (`<cache>/venvs/<name>`) that has the project installed editable
and its test dependencies plus pytest-testmon. Steps already done are skipped.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DEFAULT", "PROJECTS", "Project", "prepare", "source_files"]

# The default run: suites of a few seconds, so 3 x 20 mutations fit in well under 30 min
# on a shared machine. attrs (hypothesis, ~25 s CPU), packaging (64k parametrised tests,
# ~100 s CPU), click (~10 s CPU) and more-itertools (its baseline never finished under
# load: docs/benchmarks.md) are there for `--projects`.
DEFAULT = ("toolz", "cachetools", "boltons")


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    test_deps: tuple[str, ...]
    why: str
    sources: tuple[str, ...]
    """Folders (relative to the project root) whose .py files may be mutated, or a module
    at the root (`parse.py`)."""
    pytest_env: dict[str, str] = field(default_factory=dict)
    sha256: str = ""
    """The sdist's sha256, checked after download (empty: not pinned by hash)."""


PROJECTS: dict[str, Project] = {
    p.name: p
    for p in (
        Project(
            "toolz",
            "1.2.0",
            ("pytest",),
            "15 test modules (inside the package), suite in about a second, and "
            "toolz/__init__ imports every module: a plain import graph selects everything",
            ("toolz",),
        ),
        Project(
            "more-itertools",
            "11.2.1",
            ("pytest",),
            "one big module behind a package root that re-exports it; ~1,000 fast tests",
            ("more_itertools",),
        ),
        Project(
            "cachetools",
            "8.0.2",
            ("pytest",),
            "12 test modules over one package root; classes with overridden methods",
            ("src/cachetools",),
        ),
        Project(
            "boltons",
            "26.2.0",
            ("pytest",),
            "29 test modules over ~30 independent modules (no package root that imports "
            "them all); a decorator toolkit (funcutils) and caches built at import time",
            ("boltons",),
        ),
        Project(
            "attrs",
            "26.1.0",
            ("pytest", "hypothesis", "pympler", "cloudpickle"),
            "class-building library: most of its code runs when classes are defined",
            ("src/attr", "src/attrs"),
            # Hypothesis draws the same examples on every run: a verdict cannot flip by luck.
            {"PYTEST_ADDOPTS": "--hypothesis-seed=0"},
        ),
        Project(
            "packaging",
            "26.4",
            ("pytest", "pretend", "tomli_w", "hypothesis"),
            "pure functions over versions, specifiers, markers and tags",
            ("src/packaging",),
        ),
        Project(
            "idna",
            "3.10",
            ("pytest",),
            "IDNA 2008 and UTS 46: a codec over large generated tables (idnadata, uts46data) "
            "that every test reaches through idna.core; unittest-style tests",
            ("idna",),
        ),
        Project(
            "click",
            "8.5.1",
            ("pytest",),
            "35 test modules, ~1,300 tests in a few seconds, no runtime dependencies, and "
            "click/__init__ imports every module: the case a plain import graph cannot narrow",
            ("src/click",),
        ),
        Project(
            "inflection",
            "0.5.1",
            ("pytest",),
            "one module of regex tables built at import time (PLURALS, SINGULARS, "
            "UNCOUNTABLES) and one test module of parametrised cases",
            ("inflection",),
            sha256="1a29730d366e996aaacffb2f1f1cb9593dc38e2ddd30c91250c6dde09ea9b417",
        ),
        Project(
            "jmespath",
            "1.0.1",
            ("pytest",),
            "a JSON query language: lexer, parser, tree interpreter and a function table; "
            "the compliance tests read JSON case files",
            ("jmespath",),
            sha256="90261b206d6defd58fdd5e85f478bf633a2901798906be2ad389150c5c60edbe",
        ),
        Project(
            "iso8601",
            "2.1.0",
            ("pytest", "hypothesis", "pytz"),
            "an ISO 8601 date parser: one module-level compiled regex and a parse function; "
            "the tests sit inside the package (hypothesis property tests among them)",
            ("iso8601",),
            {"PYTEST_ADDOPTS": "--hypothesis-seed=0"},
            sha256="6b1d3829ee8921c4301998c909f7829fa9ed3cbdac0d3b16af2d743aed1ba8df",
        ),
        Project(
            "itsdangerous",
            "2.2.0",
            ("pytest", "freezegun"),
            "signed tokens: signer, serializer, timed and URL-safe variants in a class "
            "hierarchy over one encoding module; pytest with warnings as errors",
            ("src/itsdangerous",),
            sha256="e0050c0b7da1eea53ffaf149c0cfbb5c6e2e2b69c4bef22c81fa6eb73e5f6173",
        ),
        Project(
            "pathspec",
            "0.12.1",
            ("pytest",),
            "gitignore-style matching: a pattern registry filled at import time "
            "(util.register_pattern), the gitwildmatch compiler, unittest-style tests",
            ("pathspec",),
            sha256="a482d51503a1ab33b1c67a6c3813a26953dbdc71c31dacaef9a838c4e29f5712",
        ),
        Project(
            "webcolors",
            "24.11.1",
            ("pytest",),
            "colour names and formats: definition tables built at import time (name maps "
            "reversed by a function at import) and conversion functions over them",
            ("src/webcolors",),
            sha256="ecb3d768f32202af770477b8b65f318fa4f566c22948673a977b00d589dd80f6",
        ),
        Project(
            "semver",
            "3.0.4",
            ("pytest", "pytest-cov"),
            "semantic versions: one Version class (parse, compare, bump) behind a package root "
            "that re-exports it, a CLI and deprecated module functions; pytest runs with "
            "coverage, importlib import mode and doctests of the modules and the docs",
            ("src/semver",),
            sha256="afc7d8c584a5ed0a11033af086e8af226a9c0b206f313e0301f8dd7b6b589602",
        ),
        Project(
            "isodate",
            "0.7.2",
            ("pytest",),
            "ISO 8601 dates, times and durations: a package root that imports every module, "
            "module-level regex caches filled on first use, a Duration class with operators; "
            "pytest with warnings as errors",
            ("src/isodate",),
            sha256="4cd1aa0f43ca76f4a6c6c0292a85f40b35ec2e43e315b59f06e6d32171a953e6",
        ),
        Project(
            "tabulate",
            "0.9.0",
            ("pytest",),
            "one 2,700-line module that formats tables; its tests (test/) import it whole, "
            "and it configures no type checker (mypy runs with its defaults)",
            ("tabulate",),
            sha256="0095b12bf5966de529c0feb1fa08671671b3368eec77d7ef7ab114be2c068b3c",
        ),
        Project(
            "humanize",
            "4.9.0",
            ("pytest", "freezegun"),
            "human-readable numbers, sizes and times: four modules behind a package root "
            "that imports them all, gettext catalogues loaded on demand, tests frozen in "
            "time with freezegun; typed (py.typed), no type checker configured",
            ("src/humanize",),
            sha256="582a265c931c683a7e9b8ed9559089dea7edcf6cc95be39a3cbc2c5d5ac2bcfa",
        ),
        Project(
            "python-slugify",
            "9.1.3",
            ("pytest",),
            "slugs from Unicode text: a package of five modules (a modern and a legacy "
            "algorithm, a CLI), transliteration by text-unidecode imported on demand, tests "
            "that run the CLI in a subprocess and compare against reference tables in tools/; "
            "mypy strict configured, pytest with warnings as errors",
            ("slugify",),
            sha256="90e997f2e0987239ce95e12f700086eb18e1d1d3ee22624fbbdbd095afca42b6",
        ),
        Project(
            "parse",
            "1.20.2",
            ("pytest",),
            "the reverse of format(): one 1,000-line module at the root (no package), a "
            "format-spec compiler to regexes and type converters; six flat test modules",
            ("parse.py",),
            sha256="b41d604d16503c79d81af5165155c0b20f6c8d6c559efa66b4b695c3e5a0a0ce",
        ),
        Project(
            "sqlparse",
            "0.6.1",
            ("pytest",),
            "a non-validating SQL parser: a 20-module package (lexer, keyword tables built "
            "at import, grouping engine, filters, a CLI), ~480 tests that parse and format "
            "SQL text, some running the CLI's main in-process",
            ("sqlparse",),
            sha256="ca722573f848ff2d30e40ea30f53a104b7dea7635ea9285891263eb2c58fb6e7",
        ),
        Project(
            "marshmallow",
            "3.21.3",
            ("pytest", "pytz", "simplejson"),
            "object serialization: a 5,100-line typed package (py.typed, [tool.mypy] "
            "configured), fields and schemas that import each other, ~1,200 tests, pytest "
            "addopts -v",
            ("src/marshmallow",),
            sha256="4f57c5e050a54d66361e826f94fba213eb10b67b2fdb02c3e0343ce207ba1662",
        ),
        Project(
            "tomlkit",
            "0.15.2",
            ("pytest", "PyYAML"),
            "style-preserving TOML: a 6,400-line typed package (py.typed, mypy strict and ruff "
            "configured) whose items, container and parser import each other, ~900 tests "
            "over the toml-test suite's files; built with poetry-core",
            ("tomlkit",),
            sha256="83e32755ba1d20d9340bd069ee97e9f6232ba2346b63ffcba425de01f7e327a6",
        ),
        Project(
            "pyflakes",
            "3.2.0",
            ("pytest",),
            "the linter: one 2,200-line checker module (an AST visitor) with its messages, api "
            "and reporter, ~700 tests inside the package (pyflakes/test) that run the checker on "
            "source snippets, some through a `python -m pyflakes` subprocess; untyped, no type "
            "checker configured",
            ("pyflakes",),
            sha256="1c61603ff154621fb2a9172037d84dca3500def8c8b630657d1701f026f8af3f",
        ),
        Project(
            "rfc3986",
            "2.0.0",
            ("pytest",),
            "URI parsing and validation per RFC 3986: a src/ package of eleven modules (regexes "
            "built from the ABNF at import, a URI reference namedtuple, a builder and "
            "validators), ~1,500 parametrised tests; typed hints, no type checker configured",
            ("src/rfc3986",),
            sha256="97aacf9dbd4bfd829baad6e6309fa6573aaf1be3f6fa735c8ab05e46cecb261c",
        ),
        Project(
            "soupsieve",
            "4.1.4",
            ("pytest", "beautifulsoup4"),
            "CSS selectors for Beautiful Soup: a 4,000-line typed package (py.typed, [tool.mypy] "
            "strict configured: the project's own mypy, not the habitat's defaults), a selector "
            "compiler and matcher, ~800 tests that parse HTML with bs4",
            ("soupsieve",),
            sha256="9f12cb9fabef3bbde8eea07539412512960fe2320d67834b3c5be71d9aea522f",
        ),
        Project(
            "voluptuous",
            "0.16.0",
            ("pytest",),
            "its tests inside the package, in tests.py (`python_files`), and doctests in a "
            "Markdown file (`--doctest-glob=*.md`): the case a test_*.py-only view misses",
            ("voluptuous",),
            sha256="006535e22fed944aec17bef6e8725472476194743c87bd233e912eb463f8ff05",
        ),
        Project(
            "termcolor",
            "3.3.0",
            ("pytest",),
            "one module under src/, one parametrised test module; ruff configured with "
            "`fix = true` (a check must not rewrite the user's file)",
            ("src/termcolor",),
            sha256="348871ca648ec6a9a983a13ab626c0acce02f515b9e1983332b17af7979521c5",
        ),
        Project(
            "munch",
            "4.0.0",
            ("pytest",),
            "a dict subclass with attribute access; tests beside the package, a README "
            "doctest test, and YAML tests that skip without PyYAML",
            ("munch",),
            sha256="542cb151461263216a4e37c3fd9afc425feeaf38aaa3025cd2a981fadb422235",
        ),
        Project(
            "mistune",
            "3.0.2",
            ("pytest",),
            "a Markdown parser: a src/ package of ~4,400 lines (block and inline parsers, "
            "renderers, 20 plugins and directives), typed (py.typed) with no type checker "
            "configured; ~940 tests, most generated from Markdown fixture files",
            ("src/mistune",),
            sha256="fc7f93ded930c92394ef2cb6f04a8aabab4117a91449e72dcc8dfa646a508be8",
        ),
        Project(
            "schema",
            "0.7.7",
            ("pytest",),
            "one typed module at the root (~930 lines of validators), one test module of "
            "~116 tests beside it; no ruff or mypy configured (black's settings only)",
            ("schema.py",),
            sha256="7da553abd2958a19dc2547c388cde53398b39196175a9be59ea1caf5ab0a1807",
        ),
        Project(
            "addict",
            "2.4.0",
            ("pytest",),
            "a dict subclass with recursive attribute access: a package of one module, "
            "unittest-style test classes in test_addict.py at the root",
            ("addict",),
            sha256="b3b2210e0e067a281f5646c8c5db92e99b7231ea8b0eb5f74dbdf9e259d4e494",
        ),
        Project(
            "wcwidth",
            "0.2.13",
            ("pytest", "pytest-cov"),
            "terminal column widths of Unicode text: a flat package whose module-level "
            "tables are megabytes of tuples (table_wide, table_zero, table_vs16), an "
            "lru_cache'd lookup per character, no type hints; tests over the tables and "
            "emoji sequence files read at import; its tox.ini's addopts need pytest-cov",
            ("wcwidth",),
            sha256="72ea0c06399eb286d978fdedb6923a9eb47e1c486ce63e9b4e64fc18303972b5",
        ),
        Project(
            "pyasn1",
            "0.6.1",
            ("pytest",),
            "ASN.1 types and BER/CER/DER codecs: a package of ~11,500 lines (type classes with "
            "constraints and tag sets, codecs that dispatch on tag maps built at import), no "
            "type hints; 1,179 unittest-style tests under tests/ run by pytest",
            ("pyasn1",),
            sha256="6f580d2bdd84365380830acf45550f2511469f673cb4a5ae3857a3170128b034",
        ),
        Project(
            "tinydb",
            "4.8.2",
            ("pytest", "pyyaml"),
            "a document database on a JSON file: a package of small modules (queries, "
            "table, storages, middlewares) re-exported by its __init__, a mypy plugin module "
            "that imports mypy; 204 tests, most through conftest fixtures parametrised over "
            "a memory and a JSON-file storage (the file ones write to disk: the suite's wall "
            "is mostly waiting on it); poetry-core build, no ruff or mypy configured",
            ("tinydb",),
            sha256="f7dfc39b8d7fda7a1ca62a8dbb449ffd340a117c1206b68c50b1a481fb95181d",
        ),
    )
}

_GITIGNORE = "__pycache__/\n.mypy_cache/\n.pytest_cache/\n.ruff_cache/\n.hypothesis/\n"
_GITIGNORE += ".testmondata*\n*.egg-info/\n"
# pytest-cov's data file (semver's addopts take --cov): the project's own repository ignores
# it; a tree that did not would make every test run's own output "the change" of the next.
_GITIGNORE += ".coverage\n.coverage.*\n"


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-800:]}")
    return done


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    who = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    return _run(["git", *who, *args], root)


def _sdist(project: Project, cache: Path) -> Path:
    folder = cache / "sdist"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{project.name.replace('-', '_')}-{project.version}"
    found = [p for p in folder.glob("*.tar.gz") if p.name.lower() == f"{stem}.tar.gz".lower()]
    if not found:
        spec = f"{project.name}=={project.version}"
        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:"]
        _run([*pip, "--no-deps", spec, "-d", str(folder)])
        found = [p for p in folder.glob("*.tar.gz") if p.name.lower().startswith(stem.lower())]
    if project.sha256:
        digest = hashlib.sha256(found[0].read_bytes()).hexdigest()
        if digest != project.sha256:
            raise RuntimeError(
                f"{found[0]}: sha256 {digest}, the pin in Project({project.name!r}).sha256 is "
                f"{project.sha256}; delete the file to download it again, or fix the pin"
            )
    return found[0]


def _extract(sdist: Path, work: Path) -> Path:
    if work.is_dir() and (work / ".git").is_dir():
        return work
    tmp = work.with_name(work.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp, filter="data")
    (inner,) = [p for p in tmp.iterdir() if p.is_dir()]
    shutil.rmtree(work, ignore_errors=True)
    inner.rename(work)
    shutil.rmtree(tmp)
    (work / ".gitignore").write_text(_GITIGNORE, encoding="utf-8")
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "commit", "-qm", f"{sdist.name}")
    return work


def _relocate(project: Project, root: Path, venv: Path) -> None:
    """Point a venv made for the same project elsewhere (a cache folder that moved) at
    `root`: the editable install's paths (.pth files, setuptools' finder) and the scripts'
    interpreter lines name the old place, so the project would not import (src layouts)."""
    site = next((venv / "lib").glob("python3*/site-packages"))
    at = re.compile(r"[^\s'\"]*/work/" + re.escape(project.name) + r"(?=[/\s'\"]|$)", re.M)
    for path in [*site.glob("*.pth"), *site.glob("__editable__*finder.py")]:
        text = path.read_text(encoding="utf-8")
        path.write_text(at.sub(str(root), text), encoding="utf-8")
    shebang = re.compile(r"^#!\S*/venvs/" + re.escape(project.name) + r"/bin/")
    for script in (venv / "bin").iterdir():
        if script.is_file() and not script.is_symlink():
            head = script.read_bytes()[:200]
            if head.startswith(b"#!") and shebang.match(head.decode(errors="replace")):
                text = script.read_text(encoding="utf-8")
                script.write_text(shebang.sub(f"#!{venv}/bin/", text), encoding="utf-8")


def _venv(project: Project, root: Path, venv: Path, python: str) -> Path:
    exe = venv / "bin" / "python"
    stamp = venv / ".bench-installed"
    if stamp.is_file():
        if stamp.read_text(encoding="utf-8").strip() != str(root):
            _relocate(project, root, venv)
            stamp.write_text(f"{root}\n", encoding="utf-8")
        return exe
    _run([python, "-m", "venv", "--clear", str(venv)])
    pip = [str(exe), "-m", "pip", "install", "--quiet"]
    _run([*pip, "-e", str(root), *project.test_deps, "pytest-testmon"])
    stamp.write_text(f"{root}\n", encoding="utf-8")
    return exe


def _imports_from(project: Project, root: Path, exe: Path) -> None:
    """The venv imports the project from `root` (run outside it: not from the cwd)."""
    first = Path(project.sources[0])
    name = first.stem if first.suffix == ".py" else first.name  # a module at the root
    code = f"import {name}, sys; sys.stdout.write({name}.__file__)"
    done = subprocess.run([str(exe), "-c", code], cwd="/", capture_output=True, text=True)
    where = Path(done.stdout.strip() or "/nowhere").resolve()
    if done.returncode != 0 or not where.is_relative_to(root.resolve()):
        raise RuntimeError(
            f"{exe} does not import {name} from {root} ({done.stderr.strip()[-300:] or where}); "
            f"delete {exe.parent.parent} to have it installed again"
        )


def prepare(project: Project, cache: Path, python: str) -> tuple[Path, Path]:
    """(project root in git, the venv's interpreter)."""
    sdist = _sdist(project, cache)
    root = _extract(sdist, cache / "work" / project.name)
    exe = _venv(project, root, cache / "venvs" / project.name, python)
    _imports_from(project, root, exe)
    # A run killed mid-mutation leaves the mutated file behind: tracked files go back to
    # HEAD first, or the commit below would make that mutation part of every baseline.
    git(root, "checkout", "-q", "--", ".")
    if git(root, "status", "--porcelain").stdout.strip():
        # An editable install may write files (a version file, metadata): part of HEAD.
        git(root, "add", "-A")
        git(root, "commit", "-qm", "bench: files written by the editable install")
    return root, exe


def reset(root: Path) -> None:
    """Back to the sdist commit: tracked files restored, untracked (non-ignored) removed."""
    git(root, "checkout", "-q", "--", ".")
    git(root, "clean", "-fdq")


def source_files(root: Path, sources: tuple[str, ...]) -> list[str]:
    """The project's .py files a mutation may edit (relative posix paths): those under each
    source folder, or the module itself when a source is one (`parse.py`), tests left out."""
    out: list[str] = []
    for folder in sources:
        path = root / folder
        found = [path] if path.is_file() else sorted(path.rglob("*.py"))
        out += [
            p.relative_to(root).as_posix()
            for p in found
            if "tests" not in p.relative_to(root).parts and not p.name.startswith("test_")
        ]
    return out
