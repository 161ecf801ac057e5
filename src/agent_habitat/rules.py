"""The habit rules: the few instructions an agent needs to use the habitat well.

`habitat rules --for claude|cursor|agents` prints them; `--write` puts them in the file
that client reads (CLAUDE.md, .cursor/rules/habitat.mdc, AGENTS.md), between markers, so
the user's own text around them is never touched and a second write replaces only the
block. Every tool they name is checked (by the tests) against the server's tool names.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from .errors import HabitatError
from .files.atomic import write_atomic
from .files.text import decode_text, in_style, line_endings

__all__ = [
    "BEGIN_MARKER",
    "END_MARKER",
    "RULES_FILES",
    "SERVER_TOOL_NAMES",
    "TERMINAL_TOOL_NAMES",
    "RulesTarget",
    "RulesWriteResult",
    "rules_block",
    "rules_text",
    "write_rules",
]

RulesTarget = Literal["claude", "cursor", "agents"]

RULES_FILES: dict[RulesTarget, str] = {
    "claude": "CLAUDE.md",
    "cursor": ".cursor/rules/habitat.mdc",
    "agents": "AGENTS.md",
}
"""Where each client looks for project instructions (relative to the project root)."""

_SHELL_VERBS = (
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
)

SERVER_TOOL_NAMES: frozenset[str] = frozenset(
    {f"shell_{verb}" for verb in _SHELL_VERBS}
    | {"project_open", "project_scene", "verify_run", "verify_status", "verify_cancel"}
    | {"file_write", "file_edit"}
)
"""Every tool of the primary server (`habitat mcp`); to be derived from the verb table."""

TERMINAL_TOOL_NAMES: frozenset[str] = frozenset(
    {f"terminal_{verb}" for verb in _SHELL_VERBS} | {"terminal_host"}
)
"""Every tool of the escape server (`habitat terminal-mcp`)."""

BEGIN_MARKER = "<!-- agent-habitat rules: begin (`habitat rules --write` replaces this block) -->"
END_MARKER = "<!-- agent-habitat rules: end -->"

_RULES = """\
## Working in this project with agent-habitat

The `habitat` MCP server gives you shell tabs that persist, a verification ladder and edit
tools. Use them instead of ad-hoc shells:

- Start with `project_scene` (branch, changed files, verify state) and `shell_scene`
  (tabs and runs already going; they survive restarts).
- Short commands: `shell_run`. Long ones (dev servers, watchers, big builds): their own
  tab, with `background=true` or `yield_after_seconds`; keep `main` free.
- Waiting for output or an exit: `shell_wait` with an `until` regex and a timeout, never
  `sleep` or repeated `shell_last`. Read more of a run with `shell_last` (`grep`,
  `tail_lines`, `since`) instead of running it again.
- Edit with `file_edit` (exact `old` text; add an `anchor` when it repeats) or
  `file_write` for a whole file. A refused edit lists the candidate lines: fix `old`.
- After edits, `verify_run`. Before saying anything is green or done, `verify_status`.
- Only `green` on the current snapshot counts: a stale epoch (files changed since) proves
  nothing, and `incomplete` is not green. Run `verify_run` again.
- Stop what you start: `shell_kill` or `shell_close` a tab you no longer need,
  `verify_cancel` a verify that is obsolete.
- If `habitat` stops answering, the `habitat-terminal` server's `terminal_run` still works.
"""

_CURSOR_FRONTMATTER = """\
---
description: How to use the agent-habitat tools (shell tabs, verify, file edits)
alwaysApply: true
---
"""

WriteAction = Literal["created", "updated", "appended", "unchanged"]


class RulesWriteResult(BaseModel):
    path: str = Field(description="The file written, relative to the project root.")
    action: WriteAction = Field(
        description="created: new file; updated: the block between the markers replaced; "
        "appended: block added after the file's own text; unchanged: already up to date."
    )


def rules_block() -> str:
    """The rules between their markers, as written into a file."""
    return f"{BEGIN_MARKER}\n{_RULES}{END_MARKER}\n"


def rules_text(target: RulesTarget) -> str:
    """What a new rules file for `target` holds (Cursor's needs its frontmatter)."""
    return (_CURSOR_FRONTMATTER if target == "cursor" else "") + rules_block()


def write_rules(project: Path, target: RulesTarget) -> RulesWriteResult:
    """Create the client's rules file, or merge the block into it (never clobbering)."""
    label = RULES_FILES[target]
    path = project / label
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, rules_text(target).encode("utf-8"), None)
        return RulesWriteResult(path=label, action="created")
    old = decode_text(data, label)
    new, action = _merge(old, label)
    if new != old:
        write_atomic(path, new.encode("utf-8"), stat.S_IMODE(os.stat(path).st_mode))
    return RulesWriteResult(path=label, action=action)


def _merge(old: str, label: str) -> tuple[str, WriteAction]:
    style = line_endings(old)
    block = in_style(rules_block(), style)
    begins, ends = old.count(BEGIN_MARKER), old.count(END_MARKER)
    if begins == ends == 0:
        separator = "" if not old else ("\n" if old.endswith("\n") else "\n\n")
        return old + in_style(separator, style) + block, "appended"
    start, end = old.find(BEGIN_MARKER), old.find(END_MARKER)
    if begins != 1 or ends != 1 or end < start:
        raise HabitatError(
            f"{label} has {begins} begin and {ends} end marker(s) of the agent-habitat rules "
            "block, not one pair in order; fix or remove them by hand, then write again "
            "(the file is unchanged)"
        )
    stop = end + len(END_MARKER)
    tail = old[stop:]
    tail = tail[2:] if tail.startswith("\r\n") else tail[1:] if tail.startswith("\n") else tail
    new = old[:start] + block + tail
    return new, "unchanged" if new == old else "updated"
