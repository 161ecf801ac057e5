"""The marker that stands for the bytes an output body leaves out: written and parsed here only.

`read_capped` puts one between the head and the tail it keeps; the MCP wire cuts a body
again around it; the dashboard's tails drop the head before it. The marker says how many
bytes are gone and where they are (the spool, or not kept because the spool freed them).
"""

from __future__ import annotations

import re

__all__ = ["omitted_marker", "split_omitted"]

_MARKER = re.compile(r"\n… \[(\d+) bytes omitted; [^\]\n]*\] …\n")


def omitted_marker(omitted: int, freed: int = 0, freed_reason: str = "") -> str:
    """The line standing for `omitted` bytes; `freed` of them were not kept (`freed_reason`)."""
    if freed <= 0:
        return f"\n… [{omitted} bytes omitted; full output in the spool] …\n"
    why = f"not kept: {freed_reason}"
    if freed == omitted:
        return f"\n… [{omitted} bytes omitted; {why}] …\n"
    return f"\n… [{omitted} bytes omitted; {freed} of them {why}, the rest in the spool] …\n"


def split_omitted(text: str) -> tuple[str, int, str] | None:
    """`(head, omitted, tail)` around the first marker in `text`; None when it has none."""
    found = _MARKER.search(text)
    if found is None:
        return None
    return text[: found.start()], int(found.group(1)), text[found.end() :]
