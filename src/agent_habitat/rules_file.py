"""`habitat rules --write`: the rules block merged into the file a client reads.

Created when missing; otherwise the block between the markers is replaced, or appended after
the user's own text, in the file's line-ending style. Apart from `rules`, so that printing
the rules loads no file-writing code. The result is a named tuple, not a pydantic model, as
`habitat init`'s is: pydantic's import and first model were most of the command's time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, NamedTuple

from .errors import HabitatError
from .files.atomic import write_project_file
from .files.text import decode_text, in_style, line_endings
from .rules import BEGIN_MARKER, END_MARKER, RULES_FILES, RulesTarget, rules_block, rules_text

__all__ = ["RulesWriteResult", "WriteAction", "write_rules"]

WriteAction = Literal["created", "updated", "appended", "unchanged"]


class RulesWriteResult(NamedTuple):
    path: str
    """The file written, relative to the project root."""
    action: WriteAction
    """created: new file; updated: the block between the markers replaced; appended: block
    added after the file's own text; unchanged: already up to date."""

    def to_json(self) -> str:
        """The result as `habitat rules --write --json` prints it."""
        return json.dumps(self._asdict(), indent=2, ensure_ascii=False)


def write_rules(project: Path, target: RulesTarget) -> RulesWriteResult:
    """Create the client's rules file, or merge the block into it (never clobbering)."""
    label = RULES_FILES[target]
    path = project / label
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        write_project_file(path, rules_text(target).encode("utf-8"), existed=False)
        return RulesWriteResult(path=label, action="created")
    old = decode_text(data, label)
    new, action = _merge(old, label)
    if new != old:
        write_project_file(path, new.encode("utf-8"), existed=True)
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
