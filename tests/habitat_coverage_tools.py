"""Coverage is not started in the third-party tools the suite's processes run: mypy, dmypy,
pip, venv.

`patch = subprocess` (pyproject's `[tool.coverage.run]`) puts COVERAGE_PROCESS_CONFIG in the
environment, and coverage's own `a1_coverage.pth` starts coverage in every Python that sees
it: ~0.11 CPU s to import and start it, the tracer on every line the process runs, and a
data file at exit. A type checker or an installer never runs agent_habitat's code, so with
`source = ["agent_habitat"]` what it would record is always nothing; yet a third of the
Pythons the suite starts are mypy and dmypy (the ladder's type-check rung on each test's
project).

Installed into the dev venv by `make` (`python tests/habitat_coverage_tools.py`): a copy of
this module and `a0_habitat_coverage_tools.pth`, which site reads before coverage's
`a1_coverage.pth` (it reads a folder's .pth files in name order). In a Python started as one
of those tools it takes coverage's variables out of the process's environment (its own
children's with it), so coverage's hook, left as it is, finds no request; every other
process (the host, the CLI, the bridge, the warm pytest, a project's tests with the testdeps
plugin) is measured as before. Nothing here runs when the variables are not set.
"""

from __future__ import annotations

import os
import sys

__all__ = ["install", "tool_of"]

_MODULES = frozenset({"mypy", "pip", "venv", "ensurepip"})
"""Top-level packages of `python -m NAME` (`mypy.dmypy` is mypy's)."""
_SCRIPTS = frozenset({"mypy", "dmypy", "pip", "pip3"})
"""Console scripts, by name (`pip3.11` is `pip3`)."""
_TAKES_VALUE = frozenset({"-W", "-X", "--check-hash-based-pycs"})
_VARIABLES = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")
_PTH = "a0_habitat_coverage_tools.pth"


def tool_of(argv: list[str]) -> str | None:
    """The third-party tool that `argv` (an interpreter's `sys.orig_argv`) runs, or None."""
    args = iter(argv[1:])
    for arg in args:
        if arg in _TAKES_VALUE:
            next(args, None)
        elif arg.startswith("-m"):
            module = arg[2:] or next(args, "")
            return module if module.partition(".")[0] in _MODULES else None
        elif arg == "-" or arg.startswith("-c") or not arg.startswith("-"):
            script = os.path.basename(arg).partition(".")[0]
            return script if script in _SCRIPTS else None
    return None


def install(site_packages: str) -> None:
    """This module and its .pth line into `site_packages`."""
    with open(__file__, encoding="utf-8") as source:
        text = source.read()
    with open(os.path.join(site_packages, "habitat_coverage_tools.py"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(site_packages, _PTH), "w", encoding="utf-8") as f:
        f.write("import habitat_coverage_tools\n")


if __name__ == "__main__":
    import sysconfig

    install(sysconfig.get_path("purelib"))
elif any(name in os.environ for name in _VARIABLES) and tool_of(sys.orig_argv):
    for name in _VARIABLES:
        os.environ.pop(name, None)
