"""The habit rules: the few instructions an agent needs to use the habitat well.

`habitat rules --for claude|cursor|agents` prints them; `--write` puts them in the file
that client reads (CLAUDE.md, .cursor/rules/habitat.mdc, AGENTS.md), between markers, so
the user's own text around them is never touched and a second write replaces only the
block. The tool names come from the verb table: a bullet about the verify tools appears only
when the table has them, and the tests check every tool named against the table. Printing
them loads neither the table nor pydantic (a copy of the names, kept equal by a test);
`rules_file` merges them into a file (`--write`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .verbs import AnyVerb

__all__ = [
    "BEGIN_MARKER",
    "END_MARKER",
    "RULES_FILES",
    "SERVER_TOOL_NAMES",
    "TERMINAL_TOOL_NAMES",
    "VERIFY_TOOLS",
    "RulesTarget",
    "rules_block",
    "rules_text",
    "server_tool_names",
    "terminal_tool_names",
]

RulesTarget = Literal["claude", "cursor", "agents"]

RULES_FILES: dict[RulesTarget, str] = {
    "claude": "CLAUDE.md",
    "cursor": ".cursor/rules/habitat.mdc",
    "agents": "AGENTS.md",
}
"""Where each client looks for project instructions (relative to the project root)."""


def server_tool_names(verbs: Iterable[AnyVerb] | None = None) -> frozenset[str]:
    """Every verb tool of the primary server (`habitat mcp`), from the verb table."""
    return frozenset(verb.tool_name("shell") for verb in _table(verbs))


def terminal_tool_names(verbs: Iterable[AnyVerb] | None = None) -> frozenset[str]:
    """The escape server's verb tools (`habitat terminal-mcp`): the shell verbs only."""
    return frozenset(verb.tool_name("terminal") for verb in _table(verbs) if verb.group == "shell")


def _table(verbs: Iterable[AnyVerb] | None) -> Iterable[AnyVerb]:
    if verbs is not None:
        return verbs
    from .verbs import VERBS

    return VERBS


_SHELL_VERB_NAMES = "close history input kill last rerun run scene wait which".split()
SERVER_TOOL_NAMES: frozenset[str] = frozenset(
    (
        *(f"shell_{name}" for name in _SHELL_VERB_NAMES),
        *("project_open", "project_scene", "project_trust", "file_edit", "file_write"),
        *("verify_run", "verify_status", "verify_cancel"),
    )
)
"""The primary server's verb tools, the verify tools among them: `server_tool_names()` as
the verb table gives it, copied so that printing the rules needs neither the table nor its
models (a test keeps the two equal)."""

TERMINAL_TOOL_NAMES: frozenset[str] = frozenset(f"terminal_{n}" for n in _SHELL_VERB_NAMES)
"""The escape server's verb tools (its `terminal_host` is an adapter's own tool, never named
by the rules); `terminal_tool_names()` copied as SERVER_TOOL_NAMES is."""

BEGIN_MARKER = "<!-- agent-habitat rules: begin (`habitat rules --write` replaces this block) -->"
END_MARKER = "<!-- agent-habitat rules: end -->"

_INTRO = """\
## Working in this project with agent-habitat

The `habitat` MCP server gives you persistent shell tabs{verify} and edit tools.
Use them instead of ad-hoc shells:

"""

_SHELL_RULES = """\
- Start with `project_scene` (branch, changed files{verify_state}) and `shell_scene`
  (tabs and runs already going; they survive restarts).
- Short commands: `shell_run`. Long ones (dev servers, watchers, big builds): their own
  tab, with `background=true` or `yield_after_seconds`; keep `main` free.
- Waiting for output or an exit: `shell_wait` with an `until` regex and a timeout, never
  `sleep` or repeated `shell_last`. Read more of a run with `shell_last` (`grep`,
  `tail_lines`, `since`) instead of running it again.
- Edit with `file_edit` (exact `old` text; add an `anchor` when it repeats) or
  `file_write` for a whole file. A refused edit lists the candidate lines: fix `old`.
"""

_VERIFY_RULES = """\
- After edits, `verify_run`. Before saying anything is green or done, `verify_status`.
- Only `green` on the current snapshot counts: a stale epoch (files changed since) proves
  nothing, `nothing_to_verify` means nothing was checked and `incomplete` that a rung could
  not run: neither is green. Run `verify_run` again after a change.
"""

_STOP_RULES = """\
- Stop what you start: `shell_kill` or `shell_close` a tab you no longer need{verify_cancel}.
- If `habitat` stops answering, the `habitat-terminal` server's `terminal_run` still works.
"""

VERIFY_TOOLS = frozenset({"verify_run", "verify_status", "verify_cancel"})
"""The verify tools (DESIGN §4) the rules name; their bullets appear only when the server has
them, so the rules never send an agent to a tool it cannot call."""


def _rules(tools: frozenset[str]) -> str:
    verify = VERIFY_TOOLS <= tools
    return (
        _INTRO.format(verify=", a verification ladder" if verify else "")
        + _SHELL_RULES.format(verify_state=", verify state" if verify else "")
        + (_VERIFY_RULES if verify else "")
        + _STOP_RULES.format(
            verify_cancel=",\n  `verify_cancel` a verify that is obsolete" if verify else ""
        )
    )


_CURSOR_FRONTMATTER = """\
---
description: How to use the agent-habitat tools (shell tabs, verify, file edits)
alwaysApply: true
---
"""


def rules_block(tools: frozenset[str] = SERVER_TOOL_NAMES) -> str:
    """The rules for a server offering `tools` (default: the verb table's), between markers."""
    return f"{BEGIN_MARKER}\n{_rules(tools)}{END_MARKER}\n"


def rules_text(target: RulesTarget, tools: frozenset[str] = SERVER_TOOL_NAMES) -> str:
    """What a new rules file for `target` holds (Cursor's needs its frontmatter)."""
    return (_CURSOR_FRONTMATTER if target == "cursor" else "") + rules_block(tools)
