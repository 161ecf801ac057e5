"""A pytest failure's key is its node id, whatever parsers.py adds around it; what names no
one test has none (it stays the change's)."""

from __future__ import annotations

import pytest

from agent_habitat.verify.models import Diagnostic
from agent_habitat.verify.rungs.pytest_head import test_key as key_of


@pytest.mark.parametrize(
    ("message", "key"),
    [
        ("tests/t.py::test_a: assert 1 == 2", "tests/t.py::test_a"),
        ("tests/t.py::C::test_a (tests/t.py:12): assert 1 == 2", "tests/t.py::C::test_a"),
        ("tests/t.py::test_p[a: b] (tests/t.py:3): boom", "tests/t.py::test_p[a: b]"),
        ("tests/t.py::test_p[x-1]: boom", "tests/t.py::test_p[x-1]"),
        ("tests/t.py: collection error: ImportError", None),
        ("something went wrong", None),
    ],
)
def test_the_key_is_the_node_id(message: str, key: str | None) -> None:
    assert key_of(Diagnostic(file="tests/t.py", message=message, source="pytest")) == key


def test_another_tool_has_no_key() -> None:
    diag = Diagnostic(file="t.py", message="tests/t.py::test_a: x", source="cargo test")
    assert key_of(diag) is None
