"""A shell verb's command line read without the verb table, for the host to answer.

The verb table's models (pydantic) cost a large part of a second to import; when a host runs,
the host validates the arguments itself, so the CLI only has to read the command line the
way `habitat <verb>` reads it. `ARGUMENTS` is a copy of what `cli.flags.argument_specs`
derives from each row (help texts included, and `EXAMPLES` the rows' examples, for
`cli.verb_help`; a test keeps the two equal), and `read_argv`
parses with the same argparse calls, so both accept the same command lines with the same
results. Anything that is not a plain, valid call — help, a parse error, a flag given twice,
an interactive run — returns None, and the full parser answers it, with its own messages.

A plain command line (the positional words first, then whole `--flag value` or `--flag=value`
of this verb) is read without argparse, which with `gettext` and `re` would be a quarter of
what a call through the host spends on imports; any other (an abbreviated flag, `--`, a
value that starts with a dash) goes to the argparse reading, which decides as the full
parser does.

`VERIFY_ARGUMENTS` is the same copy for `habitat verify` (`verify_run`'s row, help texts
kept, `wait` left out: the command always waits), which `cli.verify_cmds` builds its flags
from without importing the models.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    import argparse
    from typing import Any

    _Specs = list[tuple[tuple[str, ...], dict[str, Any]]]

__all__ = [
    "ARGUMENTS",
    "EXAMPLES",
    "PROJECT_ARGUMENTS",
    "VERIFY_ARGUMENTS",
    "VERIFY_LEFT_OUT",
    "VerbCall",
    "add_arguments",
    "add_common",
    "read_argv",
]

_S: dict[str, Any] = {"type": "str"}
_SECONDS = {"type": "float", "metavar": "S"}


def _tab_args(help_: str) -> _Specs:
    return [
        (
            ("tab_positional",),
            {"metavar": "TAB", "nargs": "?", "help": f"{help_}; the same as --tab"},
        ),
        (("--tab",), {"dest": "tab", "help": help_, **_S}),
    ]


_TAB_MAIN = _tab_args("Tab name (default: main)")
_TAB_GIVEN = _tab_args("Tab name")
_INDEX = (("--index",), {"dest": "index", "type": "int", "help": "History index; default the last"})
_BACKGROUND = (
    ("--background",),
    {"dest": "background", "action": "store_true", "help": "Return at once with the pid"},
)
_TIMEOUT = (
    ("--timeout-seconds",),
    {"dest": "timeout_seconds", "help": "Kill the process tree after this long", **_SECONDS},
)
_YIELD = (
    ("--yield-after-seconds",),
    {"dest": "yield_after_seconds", "help": "Return state=running after this long", **_SECONDS},
)

ARGUMENTS: dict[str, _Specs] = {
    "scene": [],
    "run": [
        (("command",), {"metavar": "COMMAND", "help": "Shell command line"}),
        *_tab_args("Tab name; created on first use (default: main)"),
        (("--cwd",), {"dest": "cwd", "help": "Default the tab's cwd", **_S}),
        (
            ("--shell",),
            {"dest": "shell", "help": "bash, sh, zsh, fish or pwsh; default the tab's", **_S},
        ),
        (
            ("--env",),
            {
                "dest": "env",
                "action": "append",
                "metavar": "KEY=VALUE",
                "help": "Extra variables for this command only (repeatable)",
            },
        ),
        _TIMEOUT,
        _BACKGROUND,
        _YIELD,
        (
            ("--interactive",),
            {"dest": "interactive", "action": "store_true", "help": "Keep stdin open for `input`"},
        ),
    ],
    "history": [
        *_TAB_MAIN,
        (
            ("--limit",),
            {"dest": "limit", "type": "int", "help": "Newest rows to return (default: 20)"},
        ),
    ],
    "rerun": [*_TAB_MAIN, _INDEX, _BACKGROUND, _TIMEOUT, _YIELD],
    "last": [
        *_TAB_MAIN,
        _INDEX,
        (
            ("--head-lines",),
            {"dest": "head_lines", "type": "int", "help": "Only the first N lines"},
        ),
        (("--tail-lines",), {"dest": "tail_lines", "type": "int", "help": "Only the last N lines"}),
        (
            ("--since",),
            {"dest": "since", "type": "int", "help": "An earlier `cursor`: only newer output"},
        ),
        (("--grep",), {"dest": "grep", "help": "Regex: only matching lines", **_S}),
    ],
    "which": [*_TAB_MAIN],
    "kill": [
        *_TAB_GIVEN,
        (
            ("--signal",),
            {"dest": "signal", "help": "KILL, INT, HUP… or a number (default: TERM)", **_S},
        ),
    ],
    "close": [*_TAB_GIVEN],
    "wait": [
        *_TAB_MAIN,
        (("--until",), {"dest": "until", "help": "Regex to wait for in new output", **_S}),
        (
            ("--timeout-seconds",),
            {
                "dest": "timeout_seconds",
                "help": "Give up after this long (the run goes on) (default: 30)",
                **_SECONDS,
            },
        ),
    ],
    "input": [
        _TAB_GIVEN[0],
        (("text",), {"metavar": "TEXT", "help": "Text to write; add the newline yourself"}),
        _TAB_GIVEN[1],
        (("--eof",), {"dest": "eof", "action": "store_true", "help": "Close stdin after writing"}),
    ],
}
"""Each CLI shell verb's arguments as `cli.flags.argument_specs` gives them, help included;
types by name (`"int"`), and `--json` / `--project` (`cli.common.add_common`) left out."""

EXAMPLES = {
    "scene": "habitat scene --json",
    "run": "habitat run 'make -j2' --tab build --timeout-seconds 600",
    "history": "habitat history build --limit 5",
    "rerun": "habitat rerun build --index 3",
    "last": "habitat last web --tail-lines 20 --grep 'error|warn'",
    "which": "habitat which build",
    "kill": "habitat kill web --signal INT",
    "close": "habitat close web",
    "wait": "habitat wait web --until 'ready on :\\d+' --timeout-seconds 60",
    "input": "habitat input repl $'print(1)\\n'",
    "project": "habitat project --json",
    "trust": "habitat trust",
}
"""Each verb's example (its row's), which `habitat VERB --help` ends with."""

PROJECT_ARGUMENTS: dict[str, list[tuple[tuple[str, ...], dict[str, Any]]]] = {
    "project": [],
    "trust": [],
}
"""The same copy for the project verbs the CLI has (`project_scene`, `project_trust`): no
arguments of their own (a test keeps them so)."""
_READ = {**ARGUMENTS, **PROJECT_ARGUMENTS}

VERIFY_ARGUMENTS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (
        ("--policy",),
        {
            "dest": "policy",
            "help": "minimal (diagnose.files), standard (default: + compile.project, "
            "test.scoped), strict (+ build.affected), ci_parity (all)",
            "choices": ["minimal", "standard", "strict", "ci_parity"],
        },
    ),
    (
        ("--rung",),
        {
            "dest": "rung",
            "help": "Run exactly these rungs instead of the policy's (one or more; repeatable)",
            "action": "extend",
            "nargs": "+",
            "metavar": "RUNG",
            "choices": [
                "diagnose.files",
                "compile.project",
                "build.affected",
                "test.scoped",
                "test.full",
            ],
        },
    ),
    (
        ("--files",),
        {
            "dest": "files",
            "help": "The change's files, instead of git's dirty set (one or more; repeatable)",
            "action": "extend",
            "nargs": "+",
            "metavar": "FILES",
            "type": "str",
        },
    ),
    (
        ("--filter",),
        {
            "dest": "filter",
            "help": "pytest node ids, paths or '-k EXPR', instead of the affected tests "
            "(one or more; repeatable)",
            "action": "extend",
            "nargs": "+",
            "metavar": "FILTER",
            "type": "str",
        },
    ),
]
"""`verify_run`'s arguments as `cli.flags.argument_specs` gives them, help included, less
`--wait`; types by name."""
VERIFY_LEFT_OUT = ("wait",)
"""`verify_run` fields `habitat verify` has no flag for (it always waits for the verdict)."""

_TYPES: dict[str, type] = {"int": int, "float": float, "str": str}


def add_arguments(
    parser: argparse.ArgumentParser, specs: list[tuple[tuple[str, ...], dict[str, Any]]]
) -> None:
    """`parser.add_argument` for each of `specs` (a copy above), its types named by name."""
    for names, spec in specs:
        spec = dict(spec)
        if "type" in spec:
            spec["type"] = _TYPES[spec["type"]]
        parser.add_argument(*names, **spec)


_BOTH_WAYS = "tab"


class VerbCall:
    """A command line read: the verb's arguments (as the host's JSON body) and the flags."""

    __slots__ = ("body", "command", "json", "project")

    def __init__(
        self, command: str, body: dict[str, Any], *, json: bool, project: str | None
    ) -> None:
        self.command = command
        self.body = body
        self.json = json
        self.project = project
        """`--project` as given (the caller checks it)."""


class _Refused(Exception):
    """The command line is not one this reader answers: the full parser will."""


_COMMON: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (
        ("--json",),
        {"dest": "json", "action": "store_true", "help": "print the result model as JSON"},
    ),
    (
        ("--project",),
        {
            "dest": "project",
            "metavar": "DIR",
            "help": "project (workspace) folder; default the git work tree of the cwd, "
            "else the cwd",
            **_S,
        },
    ),
]
"""The flags every shell verb has besides its own (`cli.common.add_common`, which imports
the habitat: a test keeps the two alike)."""


def add_common(parser: argparse.ArgumentParser) -> None:
    """`--json` and `--project`, as `cli.common.add_common` adds them (`--project` a string
    here: the caller makes it a path)."""
    add_arguments(parser, _COMMON)


def _parser(command: str) -> argparse.ArgumentParser:
    import argparse
    from typing import NoReturn

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise _Refused(message)

        def _get_formatter(self) -> argparse.HelpFormatter:
            # This parser never prints help (the full path does); a width of its own spares
            # `shutil` (and its compression modules), which argparse imports for the terminal.
            return self.formatter_class(prog=self.prog, width=80)  # type: ignore[call-arg]

    parser = Parser(prog=f"habitat {command}", add_help=False, exit_on_error=False)
    add_arguments(parser, _READ[command])
    add_arguments(parser, _COMMON)
    return parser


def _with_argparse(command: str, rest: list[str]) -> dict[str, Any]:
    import argparse

    try:
        return vars(_parser(command).parse_args(rest))
    except argparse.ArgumentError as exc:
        raise _Refused(str(exc)) from None


class _Unsure(Exception):
    """Not a plain command line: argparse reads it."""


def _plainly(command: str, rest: list[str]) -> dict[str, Any]:
    """`rest` read as argparse reads a plain command line: its positional words all first,
    then whole flags of this verb; `_Unsure` for anything else."""
    specs = [*_READ[command], *_COMMON]
    flags = {names[0]: spec for names, spec in specs if names[0].startswith("--")}
    values: dict[str, Any] = {
        spec["dest"]: False if spec.get("action") == "store_true" else None
        for spec in flags.values()
    }
    words: list[str] = []
    i = 0
    while i < len(rest):
        word = rest[i]
        i += 1
        if not word.startswith("-") or word == "-":
            if len(words) < i - 1:
                raise _Unsure  # a positional word after a flag: argparse's own rules
            words.append(word)
            continue
        name, eq, value = word.partition("=")
        flag = flags.get(name)
        if flag is None:
            raise _Unsure  # `--`, a short or abbreviated flag, a negative number
        if flag.get("action") == "store_true":
            if eq:
                raise _Unsure
            values[flag["dest"]] = True
            continue
        if not eq:
            if i >= len(rest) or rest[i].startswith("-"):
                raise _Unsure
            value = rest[i]
            i += 1
        _put(values, flag, value)
    values.update(_positionals([(n[0], s) for n, s in specs if not n[0].startswith("-")], words))
    return values


def _put(values: dict[str, Any], flag: dict[str, Any], value: str) -> None:
    try:
        typed = _TYPES[flag.get("type", "str")](value)
    except ValueError:
        raise _Unsure from None
    if flag.get("action") == "append":
        values[flag["dest"]] = [*(values[flag["dest"]] or []), typed]
    else:
        values[flag["dest"]] = typed


def _positionals(specs: list[tuple[str, dict[str, Any]]], words: list[str]) -> dict[str, Any]:
    """The positional words given to `specs`, as argparse fills them in one go: the required
    ones first served, the optional (`?`) ones left to right with what is spare."""
    required = [name for name, spec in specs if spec.get("nargs") != "?"]
    spare = len(words) - len(required)
    if spare < 0 or spare > len(specs) - len(required):
        raise _Unsure
    values: dict[str, Any] = {}
    for name, spec in specs:
        if spec.get("nargs") != "?" or spare:
            spare -= spec.get("nargs") == "?"
            values[name] = words.pop(0)
        else:
            values[name] = None
    return values


def _key_values(pairs: list[str]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise _Refused(f"{pair!r}: expected KEY=VALUE")
        out[key] = value
    return out or None


def read_argv(argv: list[str]) -> VerbCall | None:
    """`argv` (`run 'make' --tab build`) read as the full parser would, or None."""
    if not argv or argv[0] not in _READ:
        return None
    command, rest = argv[0], argv[1:]
    if any(word in ("-h", "--help") for word in rest):
        return None
    try:
        try:
            ns = _plainly(command, rest)
        except _Unsure:
            ns = _with_argparse(command, rest)
        body: dict[str, Any] = {}
        for names, spec in _READ[command]:
            dest = spec.get("dest", names[0])
            if dest == "tab_positional":
                continue
            value = ns[dest]
            if dest == _BOTH_WAYS:
                given = ns.get("tab_positional")
                if given is not None and value is not None and given != value:
                    return None  # given twice: the full path says so
                value = given if given is not None else value
            if dest == "env" and value is not None:
                value = _key_values(value)
            if value is not None:
                body[dest] = value
    except _Refused:
        return None
    return VerbCall(command, body, json=bool(ns["json"]), project=ns["project"])
