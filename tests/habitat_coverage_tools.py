"""Coverage starts in a child Python when it first finds code of agent_habitat's to run, and
never in the third-party tools the suite's processes run (mypy, dmypy, pip, venv).

`patch = subprocess` (pyproject's `[tool.coverage.run]`) puts COVERAGE_PROCESS_CONFIG in the
environment, and coverage's own `a1_coverage.pth` starts coverage in every Python that sees
it: ~0.15 CPU s to import and start it (it imports sqlite3, inspect and ~90 modules of its
own), the tracer on every line the process runs, and at exit a data file and a walk of the
whole source tree for its unexecuted files. With `source = ["agent_habitat"]` a Python that
never runs agent_habitat's code records nothing, yet most of the Pythons the suite starts
are such: mypy and dmypy (the ladder's type-check rung on each test's project), the
commands the tests' tabs run (`python3 -c ...`), a project's own tests.

Installed into the dev venv by `make` (`python tests/habitat_coverage_tools.py`): a copy of
this module, `a0_habitat_coverage_tools.pth`, which site reads before coverage's
`a1_coverage.pth` (it reads a folder's .pth files in name order, and a venv's twice), and
`a2_habitat_coverage_tools.pth`, read after it. In a Python with coverage's variables set:
* started as one of those tools, a0 takes the variables out of the process's environment
  (its own children's with it), so coverage's hook finds no request;
* started on a script of agent_habitat's (the warm pytest's zygote), a0 leaves them, and
  coverage starts at once as before;
* otherwise a0 takes them out for coverage's hook, a2 puts them back (for the process's
  children), and an audit hook starts coverage when code from a file of agent_habitat's is
  about to run (`exec` announces each module's body, however it was found: `agent_habitat.*`,
  the testdeps plugin from its own folder, a module pytest rewrote): nothing of ours ran
  before, so what is measured is what it was. A process that runs none of it (mypy's
  children, a project's tests, a tab's `python3 -c`) never imports coverage and writes no
  data file;
* started as `python -c` (the tests' own harness: their CLI probes, tests/cli_probe.py's
  interpreters), a0 takes them out and a2 puts them back, with no hook: the process is not
  measured, the hosts and CLIs it starts are. In a whole-suite run (2026-12-07, each child
  process's data in a context of its own) 152 of 328 measured children were such, and the
  figure without them was 88.46 % against 89.27 % (84.49 % with no child measured): what
  only they reach is mostly the CLI's quick paths, which the same tests check by output.
Nothing here runs when the variables are not set.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder

TYPE_CHECKING = False  # typing, like the rest, is not imported: this runs in every process
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["harness_of", "hold", "install", "restore", "tool_of"]

_MODULES = frozenset({"mypy", "pip", "venv", "ensurepip"})
"""Top-level packages of `python -m NAME` (`mypy.dmypy` is mypy's)."""
_SCRIPTS = frozenset({"mypy", "dmypy", "pip", "pip3"})
"""Console scripts, by name (`pip3.11` is `pip3`)."""
_TAKES_VALUE = frozenset({"-W", "-X", "--check-hash-based-pycs"})
_VARIABLES = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")
_PACKAGE = "agent_habitat"
_PTHS = {
    "a0_habitat_coverage_tools.pth": (
        "import habitat_coverage_tools; habitat_coverage_tools.hold()\n"
    ),
    "a2_habitat_coverage_tools.pth": (
        "import habitat_coverage_tools; habitat_coverage_tools.restore()\n"
    ),
}
_held: dict[str, str] = {}
"""Coverage's variables while a1 runs, for `restore` (a2) to put back."""
_hooked: list[bool] = []


def tool_of(argv: list[str]) -> str | None:
    """The third-party tool that `argv` (an interpreter's `sys.orig_argv`) runs, or None."""
    script = _script_of(argv)
    if script is None:
        return None
    if script.startswith("-m"):
        module = script[2:]
        return module if module.partition(".")[0] in _MODULES else None
    name = os.path.basename(script).partition(".")[0]
    return name if name in _SCRIPTS else None


def harness_of(argv: list[str]) -> bool:
    """Whether `argv` (an interpreter's `sys.orig_argv`) runs a `python -c` string: the
    suite's own harness (a test's CLI probe, tests/cli_probe.py's interpreters, an xdist
    worker), never a way a user runs the habitat (`habitat ...`, `python -m agent_habitat`,
    the host, a script of ours)."""
    args = iter(argv[1:])
    for arg in args:
        if arg in _TAKES_VALUE:
            next(args, None)
        elif arg.startswith("-c"):
            return True
        elif arg == "-" or arg.startswith("-m") or not arg.startswith("-"):
            return False
    return False


def _script_of(argv: list[str]) -> str | None:
    """`-mNAME` for `python -m NAME`, the script's path, or None (`-c`, `-`, an interactive
    interpreter)."""
    args = iter(argv[1:])
    for arg in args:
        if arg in _TAKES_VALUE:
            next(args, None)
        elif arg.startswith("-m"):
            return "-m" + (arg[2:] or next(args, ""))
        elif arg == "-" or arg.startswith("-c"):
            return None
        elif not arg.startswith("-"):
            return arg
    return None


def _roots() -> tuple[str, ...]:
    """The folders of agent_habitat's code, as coverage's `source` finds them (without
    importing it), each ending in a separator."""
    spec = PathFinder.find_spec(_PACKAGE)
    folders = (spec.submodule_search_locations or []) if spec else []
    return tuple(os.path.join(os.path.realpath(folder), "") for folder in folders)


def _ours(path: str, roots: tuple[str, ...]) -> bool:
    return os.path.realpath(path).startswith(roots)


def _start_on_ours(roots: tuple[str, ...]) -> Callable[[str, tuple[object, ...]], None]:
    """An audit hook that starts coverage when code from one of `roots` is about to run: every
    module's body and a `-m` module's run through `exec` (importlib's loaders and pytest's
    assertion rewriter alike), which announces the code object before it runs its first
    line. A hook cannot be taken off: once it fired it only compares a string."""
    started = False

    def hook(event: str, args: tuple[object, ...]) -> None:
        nonlocal started
        if event != "exec" or started:
            return
        code = args[0]
        if isinstance(code, _CODE) and _ours(code.co_filename, roots):
            started = True
            _start()

    return hook


_CODE = type(_ours.__code__)


def _start() -> None:
    try:
        import coverage
    except ImportError:
        return
    if coverage.Coverage.current() is not None:
        # Measured already (an xdist worker: pytest-cov started its own before the worker's
        # first module of ours). A second one on top would make the first one's `stop` fail.
        return
    measured = coverage.process_startup()
    if measured is not None and hasattr(measured, "_post_save_work"):
        # At its save coverage walks the source tree to list the files this process never
        # ran (0.023 of a child's 0.030 CPU s save, in hundreds of children): the suite's
        # own processes (the xdist workers) list them when they save, and the report
        # combines every file. What a child ran, its lines and arcs, it still writes.
        measured._post_save_work = _nothing  # type: ignore[method-assign]


def _nothing() -> None:
    return None


def restore() -> None:
    """Coverage's variables back into the environment, after coverage's own .pth (a2)."""
    os.environ.update(_held)
    _held.clear()


def install(site_packages: str) -> None:
    """This module and its .pth lines into `site_packages`."""
    with open(__file__, encoding="utf-8") as source:
        text = source.read()
    with open(os.path.join(site_packages, "habitat_coverage_tools.py"), "w", encoding="utf-8") as f:
        f.write(text)
    for name, line in _PTHS.items():
        with open(os.path.join(site_packages, name), "w", encoding="utf-8") as f:
            f.write(line)


def hold() -> None:
    """What a0 does (each time: site can read a venv's site-packages twice)."""
    if not any(name in os.environ for name in _VARIABLES):
        return
    if tool_of(sys.orig_argv):
        for name in _VARIABLES:
            os.environ.pop(name, None)
        return
    roots = _roots()
    script = _script_of(sys.orig_argv)
    if script and not script.startswith("-m") and _ours(script, roots):
        return  # coverage starts at once, as its own .pth would
    for name in _VARIABLES:
        if name in os.environ:
            _held[name] = os.environ.pop(name)
    if roots and not _hooked and not harness_of(sys.orig_argv):
        _hooked.append(True)
        sys.addaudithook(_start_on_ours(roots))


if __name__ == "__main__":
    import sysconfig

    install(sysconfig.get_path("purelib"))
