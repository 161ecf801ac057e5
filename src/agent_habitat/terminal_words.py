"""The CLI's words for a next step the agent's text names in MCP terms: the verify text says
"run verify_run again" or "name files or a filter" (a tool and its fields); a person at the
terminal types a command and its flags. One table, standard library only: `habitat status`
(`verify.runner.cli_text`) and the verdict of `habitat verify` (`cli.verdict_text`, on the
light path through a host too) print the same words; the MCP answers keep the tool's."""

from __future__ import annotations

__all__ = ["for_terminal"]

_TERMINAL_WORDS = (
    ("run verify_run again", "run `habitat verify` again"),
    ("never verified: run verify_run", "never verified: run `habitat verify`"),
    ("(verify_run without rung for it)", "(`habitat verify` without --rung for it)"),
    (
        "(name files or a filter, or use the ci_parity policy for the full suite)",
        "(name files with --files or tests with --filter, or use --policy ci_parity for the "
        "full suite)",
    ),
    (
        "(name files or a filter, or climb to test.full)",
        "(name files with --files or tests with --filter, or climb to test.full with --rung)",
    ),
)


def for_terminal(text: str) -> str:
    """The verify text with each next step in the CLI's words instead of the MCP tools'."""
    for agent, person in _TERMINAL_WORDS:
        text = text.replace(agent, person)
    return text
