"""`habitat rules --for claude|cursor|agents [--write]` — the habit rules for an agent."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..rules import RULES_FILES, RulesTarget, rules_text
from .common import add_common, emit_project_write, project_root

__all__ = ["register"]

_SAID = {
    "created": "created {path} with the agent-habitat rules",
    "updated": "updated the agent-habitat rules block in {path}",
    "appended": "appended the agent-habitat rules block to {path} (your text above is kept)",
    "unchanged": "{path} already has these agent-habitat rules; nothing written",
}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rules",
        help="print (or --write) the instructions an agent needs to use the habitat well",
        description=(
            "Print the habit rules for a client, or write them into the file it reads: "
            + ", ".join(f"{k}: {v}" for k, v in RULES_FILES.items())
            + ". --write merges between markers and never touches the file's other text."
        ),
    )
    p.add_argument(
        "--for",
        dest="target",
        required=True,
        choices=sorted(RULES_FILES),
        help="the client whose rules file to produce",
    )
    p.add_argument("--write", action="store_true", help="write into the project's rules file")
    add_common(p)
    p.set_defaults(handler=cmd_rules)


def cmd_rules(args: argparse.Namespace) -> int:
    target: RulesTarget = args.target
    if not args.write:
        sys.stdout.write(rules_text(target))
        return 0
    from ..rules_file import write_rules  # with its model: only a write loads pydantic

    return emit_project_write(
        args,
        RULES_FILES[target],
        lambda: write_rules(project_root(args), target),
        lambda result: _SAID[result.action].format(path=result.path) + "\n",
    )
