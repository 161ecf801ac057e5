"""The benchmark docs' tables are made from the committed JSON (issue 24): a table edited by
hand, or data changed without `bench/tables.py --write`, fails here, and so does a table of
figures that no generated block holds."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from tables import DOCS, loose_tables, put, tables, written


def test_every_generated_block_is_what_its_data_makes() -> None:
    made = written(tables())
    drifted = [str(path) for path, doc in made.items() if path.read_text(encoding="utf-8") != doc]
    assert drifted == [], f"run `.venv/bin/python bench/tables.py --write`: {drifted} differ"


def test_no_table_of_figures_outside_a_generated_block() -> None:
    loose = {str(p): loose_tables(p.read_text(encoding="utf-8")) for p in DOCS}
    assert all(not lines for lines in loose.values()), (
        f"tables not made from docs/bench-data/ (file: line numbers): {loose}"
    )


def test_a_loose_table_is_found_and_a_marked_one_is_not() -> None:
    doc = "\n".join(
        [
            "<!-- x-tables:begin -->",
            "| a |",
            "|---|",
            "<!-- x-tables:end -->",
            "",
            "<!-- table: no figures -->",
            "| folder | what |",
            "|---|---|",
            "",
            "| run | ms |",
            "|---|---|",
            "| one | 12 |",
        ]
    )
    assert loose_tables(doc) == [10]


def test_put_replaces_only_its_block() -> None:
    doc = "a\n<!-- x-tables:begin -->\nold\n<!-- x-tables:end -->\nb\n"
    assert put(doc, "x", "new") == "a\n<!-- x-tables:begin -->\nnew\n<!-- x-tables:end -->\nb\n"
    assert put(doc, "y", "new") == doc
