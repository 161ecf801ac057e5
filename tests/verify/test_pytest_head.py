"""A pytest failure's key is its node id, whatever parsers.py adds around it; a test module's
collection error is keyed by the module and what it raised (not where: HEAD's may be on
another line), so HEAD's run of the module can say it failed the same there; a conftest's,
or what names no one test, has none (it stays the change's)."""

from __future__ import annotations

import pytest

from agent_habitat.verify.models import Diagnostic
from agent_habitat.verify.rungs.pytest_head import collected
from agent_habitat.verify.rungs.pytest_head import test_key as key_of


@pytest.mark.parametrize(
    ("message", "key"),
    [
        ("tests/t.py::test_a: assert 1 == 2", "tests/t.py::test_a"),
        ("tests/t.py::C::test_a (tests/t.py:12): assert 1 == 2", "tests/t.py::C::test_a"),
        ("tests/t.py::test_p[a: b] (tests/t.py:3): boom", "tests/t.py::test_p[a: b]"),
        ("tests/t.py::test_p[x-1]: boom", "tests/t.py::test_p[x-1]"),
        (
            "tests/t.py: collection error: ImportError: cannot import name 'x' from 'p.m' "
            "(p/m.py) (raised at tests/t.py:1)",
            "tests/t.py: collection error: ImportError: cannot import name 'x' from 'p.m' (p/m.py)",
        ),
        (
            "tests/t.py: collection error: see the output",
            "tests/t.py: collection error: see the output",
        ),
        ("tests/conftest.py: collection error: ValueError: x (raised at p/m.py:3)", None),
        ("tests.t: collection error: ImportError: y", None),
        ("something went wrong", None),
    ],
)
def test_the_key_is_the_node_id(message: str, key: str | None) -> None:
    assert key_of(Diagnostic(file="tests/t.py", message=message, source="pytest")) == key


def test_a_collection_key_runs_as_its_module_and_a_node_id_as_itself() -> None:
    assert collected("tests/t.py: collection error: ImportError: y") == "tests/t.py"
    assert collected("tests/t.py::test_a") is None
    assert collected("tests/t.py::test_p[a.py: collection error: b]") is None


def test_another_tool_has_no_key() -> None:
    diag = Diagnostic(file="t.py", message="tests/t.py::test_a: x", source="cargo test")
    assert key_of(diag) is None
