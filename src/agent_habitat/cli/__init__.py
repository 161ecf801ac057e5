"""`habitat …` — a thin CLI over the same services the MCP tools call.

Each module in `_COMMAND_MODULES` has `register(subparsers)`; a subcommand sets
`handler=fn(args) -> int` (the exit code). The shell verbs come from the verb table
(`agent_habitat.verbs`). Usage errors exit 2; with `--json` every error is a JSON object
`{"error": …, "field": …}` on stderr, with the same exit codes.

A CLI call imports only what its command needs: `--version` imports nothing of ours,
`habitat scene` reads `state.db` directly when nothing needs doing (`cli.scene_fast`), a
shell verb that a running host answers is sent to it with the standard library alone
(`cli.host_verbs`), so are `status` and `cancel` (`cli.verify_light`) and the common forms
of `verify` (`cli.verify_fast`), and otherwise the
shell verbs alone are registered (no verify ladder, no MCP SDK). The top-level help, a bare
`habitat` and an unknown command list the commands from `_SUMMARY` (a test keeps it the full
parser's), without importing a command module.

The modules:
  parser         the top-level parser (JSON errors under `--json`);  common  opening the
                 habitat, errors, JSON output;  flags  a verb's subcommand from its row
  shell_cmds     the shell verbs from the table;  shell_views  how each result is shown
  attach         a foreground run copied to the terminal;  table, styles  text layout
  verb_argv      a shell verb's (and verify's) arguments without the models, for the host
  verb_help      `habitat VERB --help` for those verbs from that copy, without the models
  host_verbs, host_wire, host_scene   a verb, a call, the scene answered by a running host
  scene_fast, scene_view   `habitat scene` from state.db, and as a table
  events_cmd, events_fast  `habitat events` (the journal, read straight when no habitat
                 need be built: a host runs, or nothing needs doing)
  quiet_state, quiet_verbs  with no host and nothing to do, `state.db` read in this process:
                 `history`, `last`, `which`, `wait`, `kill` (and `events`) without building
                 the habitat
  quiet_run      `run` and `rerun` with no host and nothing to do, started (and, when
                 quick, recorded) in this process without building the habitat
  verify_cmds    `habitat verify|status|cancel`;  verify_exit  their exit codes
  verify_hosted, verify_oneshot   a climb through the host, or in this process
  verify_records `status`/`cancel` from the record;  verdict_text, ladder_view  the verdict
  verify_light   `status`/`cancel` answered by a running host (standard library only)
  verify_quiet   `cancel` with no host and nothing serving verify, from state.db
  status_quiet   `status` with no host and nothing serving verify, from state.db and the
                 tree, printed by the full path's writer (`verify.runner.cli_text`)
  project_quiet  `project` with no host and nothing to do: git and the record, in this process;
                 `trust` (already trusted, or its first grant)
  verify_fast    `verify`'s command line read without argparse, for a running host
  host_start     the host started behind a shell command a person typed (no host ran)
  host_cmd       `habitat host …`;  dashboard_cmd  `habitat dashboard`;  mcp_cmds  `habitat mcp`
  init_cmd       `habitat init`;  rules_cmd  `habitat rules`
  demo_cmd, demo_tour, demo_sample   `habitat demo`: the tour and its sample project
"""

from __future__ import annotations

import sys

from .. import __version__

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

__all__ = ["main"]

_COMMAND_MODULES = (
    "agent_habitat.cli.shell_cmds",
    "agent_habitat.cli.events_cmd",
    "agent_habitat.cli.demo_cmd",
    "agent_habitat.cli.mcp_cmds",
    "agent_habitat.cli.verify_cmds",
    "agent_habitat.cli.rules_cmd",
    "agent_habitat.cli.init_cmd",
    "agent_habitat.cli.host_cmd",
    "agent_habitat.cli.dashboard_cmd",
)

_SHELL = "agent_habitat.cli.shell_cmds"
# Which module registers each subcommand, so a call imports that module alone (a test
# checks this against the subcommands the modules register).
_MODULE_OF = {
    **dict.fromkeys(
        (
            "scene",
            "run",
            "history",
            "rerun",
            "last",
            "which",
            "kill",
            "close",
            "wait",
            "input",
            "project",
            "trust",
        ),
        _SHELL,
    ),
    "events": "agent_habitat.cli.events_cmd",
    "demo": "agent_habitat.cli.demo_cmd",
    "mcp": "agent_habitat.cli.mcp_cmds",
    "terminal-mcp": "agent_habitat.cli.mcp_cmds",
    "verify": "agent_habitat.cli.verify_cmds",
    "status": "agent_habitat.cli.verify_cmds",
    "cancel": "agent_habitat.cli.verify_cmds",
    "dashboard": "agent_habitat.cli.dashboard_cmd",
    "rules": "agent_habitat.cli.rules_cmd",
    "init": "agent_habitat.cli.init_cmd",
    "host": "agent_habitat.cli.host_cmd",
}


_SUMMARY = (
    ("scene", "every tab at once"),
    ("run", "run a command in a tab"),
    ("history", "a tab's runs (no output bodies)"),
    ("rerun", "run a history entry again (default the last)"),
    ("last", "output of a run (live while it runs)"),
    ("which", "a tab's shell, cwd and state"),
    ("kill", "kill the tab's running process tree"),
    ("close", "kill if needed and close the tab"),
    ("wait", "wait for a regex in the output, the exit, or a timeout"),
    ("input", "write to the stdin of a tab's interactive command"),
    ("project", "where the project stands: branch, HEAD, upstream, dirty files, verify"),
    ("trust", "trust the project: its code may run (the warm-up starts)"),
    ("events", "print the workspace's events (journal)"),
    ("demo", "a short tour in a temporary workspace"),
    ("mcp", "serve the primary MCP server (shell_* tools) over stdio"),
    ("terminal-mcp", "serve the escape MCP server (terminal_* tools) over stdio"),
    ("verify", "climb the verification ladder on the code as it is now"),
    ("status", "is the code green now? the workspace's latest verify epoch and who serves it"),
    ("cancel", "cancel the running verify"),
    ("rules", "print (or --write) the instructions an agent needs to use the habitat well"),
    ("init", "write a client's MCP config for this project (habitat and habitat-terminal)"),
    ("host", "start, stop or inspect the workspace host"),
    ("dashboard", "open the live dashboard (prints its one-time login URL)"),
)
"""Every command and its one-line help, in the order the full parser lists them: the
top-level help, a bare `habitat` and an unknown command show only these, so they import no
command module (the shell verbs' brings the habitat: 0.3 s of CPU for `habitat --help`).
A test keeps it equal to what the modules register."""


def build_parser(command: str | None = None, *, summary: bool = False) -> argparse.ArgumentParser:
    """The parser with every subcommand, or with only the module that registers `command`;
    `summary`: every command with its one-line help and no arguments (`_SUMMARY`)."""
    import importlib

    from .parser import HabitatParser

    parser = HabitatParser(
        prog="habitat",
        description="Shell tabs and a verification ladder shared by a coding agent and a person.",
    )
    parser.add_argument("--version", action="version", version=f"agent-habitat {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    if summary:
        from importlib.util import find_spec

        for name, helptext in _SUMMARY:
            if find_spec(_MODULE_OF[name]) is not None:  # as a full build skips one left out
                subparsers.add_parser(name, help=helptext)
        return parser
    only = _MODULE_OF.get(command) if command is not None else None
    for name in (only,) if only else _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # a command module that is not part of this build
        if name == _SHELL and only:
            module.register(subparsers, command)  # that verb's row alone
        else:
            module.register(subparsers)
    for name, sub in subparsers.choices.items():
        _add_example(name, sub)
    return parser


# Examples for the commands that are not rows of the verb table (the rows carry their own).
_EXAMPLES = {
    "events": "habitat events --since 120 --follow",
    "demo": "habitat demo",
    "mcp": "habitat mcp --embedded --project .",
    "terminal-mcp": "habitat terminal-mcp",
    "verify": "habitat verify --policy strict --files src/app.py",
    "rules": "habitat rules --for claude --write",
    "init": "habitat init --client claude",
    "host": "habitat host status",
    "status": "habitat status --json",
    "cancel": "habitat cancel",
    "dashboard": "habitat dashboard --no-browser",
}


def _add_example(name: str, parser: argparse.ArgumentParser) -> None:
    """`habitat NAME --help` ends with an example; the epilog it had stays, re-wrapped."""
    import argparse
    import textwrap

    example = _EXAMPLES.get(name)
    if example is None or "example:" in (parser.epilog or ""):
        return
    before = textwrap.fill(parser.epilog, 78) + "\n\n" if parser.epilog else ""
    parser.epilog = f"{before}example:\n  {example}"
    if parser.formatter_class is argparse.HelpFormatter:
        # Raw keeps the example's lines; the description is wrapped here instead.
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        if parser.description and "\n" not in parser.description:
            parser.description = textwrap.fill(parser.description, 78)


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line: its first word not an option."""
    for word in argv:
        if word in ("-h", "--help", "--version") or not word.startswith("-"):
            return None if word.startswith("-") else word
    return None


_HOST_VERBS = frozenset(
    ("scene", "run", "history", "rerun", "last", "which", "kill", "close", "wait", "input")
)
"""The shell verbs a running host answers through `cli.host_verbs` (standard library only)."""
_LIGHT_VERBS = _HOST_VERBS | {"project", "trust"}
"""Those and the project verbs the CLI has: asked of a running host the same way."""

_SIGPIPE_EXIT = 141
"""128 + SIGPIPE: what a shell reports for a tool that stopped because its reader left."""


_PROGRAM: list[bool] = []
"""Non-empty when `main` serves this process's own command line (`main()`, not `main(argv)`
from another program or a test)."""


def as_program() -> bool:
    """Whether this process was started for the command: its start is then the command's
    (`habitat verify` counts it in what the person waited)."""
    return bool(_PROGRAM)


def main(argv: Sequence[str] | None = None) -> int:
    """`habitat ARGV`; the exit code. A reader that goes away (`habitat … | head -1`) ends
    the command quietly, as it ends any Unix tool, with no traceback."""
    if argv is None:  # the process's own command line: it was started for this command
        _PROGRAM.append(True)
    try:
        code = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()
    except BaseException as exc:
        if not _broken_pipe(exc):
            raise
        _silence_stdout()
        return _SIGPIPE_EXIT
    if argv is None and _NO_TEARDOWN:
        _exit_without_teardown(code)
    return code


_NO_TEARDOWN: list[bool] = []
_THREADS_WAIT_S = 1.0
"""Set by a command whose process has nothing left to do once it returns (a one-shot
`habitat verify`: its verdict printed, what it started stopped, its state closed)."""


def end_without_teardown() -> None:
    """Once this command returns, the process exits at once (when it was started for it).

    The interpreter's teardown frees every module's objects one by one: after a one-shot
    verify's verdict, 0.34-0.47 s of wall at load 13-18 (isodate 0.7.2, `--rung
    diagnose.files`), against 0.03-0.06 s for an exit without it."""
    _NO_TEARDOWN.append(True)


def _exit_without_teardown(code: int) -> None:
    import atexit
    import contextlib
    import os
    import threading
    import time

    # The threads the interpreter's exit would wait for (worker threads ending with the
    # event loop): waited for here too, a while; one still going gets the ordinary exit.
    deadline = time.monotonic() + _THREADS_WAIT_S
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return
    # What registered for the exit still runs (logging's flush, a finalizer's folder, a
    # coverage measurement of this process); only the objects are not freed one by one.
    atexit._run_exitfuncs()
    # Children stopped and not waited for yet (the warm pytest) are reaped here, as the
    # teardown's last references to them would have: their CPU time counts as this
    # command's for whoever waits for it, and none is left for init to reap.
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone: nothing to keep
            stream.flush()
    os._exit(code)


def _broken_pipe(exc: BaseException) -> bool:
    """True for a BrokenPipeError, or a group of them (raised from inside a task group)."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_broken_pipe(inner) for inner in exc.exceptions)
    return isinstance(exc, BrokenPipeError)


def _silence_stdout() -> None:
    # What is still buffered would be flushed at exit into the closed pipe and reported
    # there ("Exception ignored …"): the stream goes to /dev/null instead.
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # stdout is not a file descriptor (captured in a test): nothing to flush at exit


def _no_pydantic_plugins() -> None:
    """This process loads no pydantic plugin, as `PYDANTIC_DISABLE_PLUGINS=__all__` says, and
    without setting it (the shells and commands it starts inherit the environment as it was).

    pydantic asks its plugin loader when it builds a model's validator; the loader imports
    `importlib.metadata` (with `email`, `zipfile`, `csv`) and reads every installed package's
    entry points: 30-50 ms of CPU in every command that opens the workspace, for the CLI's own
    models, which no plugin is for. Its one function stands in; a loader already imported,
    or a user's `PYDANTIC_DISABLE_PLUGINS` naming some plugins, is left as it is."""
    import os

    name = "pydantic.plugin._loader"
    if name in sys.modules or os.environ.get("PYDANTIC_DISABLE_PLUGINS", "__all__") not in (
        "__all__",
        "1",
        "true",
    ):
        return
    import types

    loader = types.ModuleType(name, "pydantic's plugin loader, finding none (cli)")
    loader.get_plugins = tuple  # type: ignore[attr-defined]  # no plugins: ()

    def real(attribute: str) -> object:
        # Anything else a pydantic asks of its loader (a newer one may import more than
        # `get_plugins`) comes from the real module, imported then: the stand-in never
        # makes an import fail. Dunder names (`__path__`, asked by every `from … import`)
        # are the module's own: it has none of them.
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        if sys.modules.get(name) is loader:
            del sys.modules[name]
        import importlib

        return getattr(importlib.import_module(name), attribute)

    loader.__getattr__ = real  # type: ignore[method-assign]  # PEP 562
    sys.modules[name] = loader


def _light(command: str, argv: list[str]) -> int | None:
    """The exit code of a command answered without argparse, or None: `scene` and `events`
    read straight, `verify`, `status` and `cancel` asked of a running host."""
    if command == "scene":
        from .scene_fast import fast_scene

        return fast_scene(argv)
    if command == "events":
        from .events_fast import fast_events

        return fast_events(argv)
    if command == "verify":
        from .verify_fast import verify_fast

        return verify_fast(argv)
    if command in ("status", "cancel"):
        from .verify_light import verify_light

        return verify_light(argv)
    return None


def _main(argv: list[str]) -> int:
    command = _command_in(argv)
    if command is None and argv[:1] == ["--version"]:
        print(f"agent-habitat {__version__}")
        return 0
    if command is not None and argv[0] == command:
        light = _light(command, argv)
        if light is not None:
            return light
    if command in _LIGHT_VERBS and argv[0] == command and {"-h", "--help"} & set(argv[1:]):
        from .verb_help import verb_help

        helped = verb_help(argv, dict(_SUMMARY)[command])
        if helped is not None:
            return helped
    if command in _LIGHT_VERBS and argv[0] == command:
        from .host_verbs import host_verb

        answered = host_verb(argv)
        if answered is not None:
            return answered
    _no_pydantic_plugins()
    from .parser import JSON_ERRORS, input_refused

    JSON_ERRORS.set("--json" in argv)
    parser = build_parser(command, summary=command not in _MODULE_OF)
    args = parser.parse_args(argv)
    JSON_ERRORS.set(bool(getattr(args, "json", False)))
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    code: int = handler(args)
    if command in _HOST_VERBS and not input_refused():
        # A command refused as bad input (exit 2, as a run's own exit code may be) ran
        # nothing of the project: no host is started behind it.
        from .host_start import start_behind

        start_behind(args)  # no host answered it (else it was not here): the next one will
    return code


if __name__ == "__main__":
    sys.exit(main())
