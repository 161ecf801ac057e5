"""The omitted-output marker: one writer, one parser, every form it takes."""

from __future__ import annotations

import pytest

from agent_habitat.mcp_tools.wire import fit_output
from agent_habitat.shell.omitted import omitted_marker, split_omitted


@pytest.mark.parametrize(
    ("omitted", "freed", "reason"),
    [(120, 0, ""), (120, 120, "the spool's budget"), (120, 40, "the spool's budget")],
)
def test_every_marker_written_parses_back_to_its_count(
    omitted: int, freed: int, reason: str
) -> None:
    text = "head line\n" + omitted_marker(omitted, freed, reason) + "tail line\n"
    assert split_omitted(text) == ("head line\n", omitted, "tail line\n")


def test_text_without_a_marker_has_no_split() -> None:
    assert split_omitted("a\n… [12 bytes] …\nb\n") is None


def test_the_wire_cuts_around_the_cores_marker_and_counts_what_it_drops() -> None:
    head = "".join(f"head {n}\n" for n in range(2000))
    tail = "".join(f"tail {n}\n" for n in range(2000))
    body = head + omitted_marker(500, 500, "the spool's budget") + tail
    fitted, omitted = fit_output(body, 500, budget=4096)
    found = split_omitted(fitted)
    assert found is not None
    kept_head, counted, kept_tail = found
    assert counted == omitted
    assert head.startswith(kept_head)
    assert tail.endswith(kept_tail)
    assert omitted == 500 + len(head) - len(kept_head) + len(tail) - len(kept_tail)
