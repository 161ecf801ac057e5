"""`verify.field_docs`: the verify models' field descriptions are pydantic's own attribute
docstrings, without pydantic reading them at import (`use_attribute_docstrings`)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

import agent_habitat.verify.runner.models
import agent_habitat.verify.runner.report
import agent_habitat.verify.timing  # noqa: F401  # its models, as status imports them
from agent_habitat.verify.field_docs import DocumentedModel, attribute_docs


def _documented() -> list[type[DocumentedModel]]:
    found: list[type[DocumentedModel]] = []
    todo: list[type[DocumentedModel]] = [DocumentedModel]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def test_every_verify_report_model_is_documented() -> None:
    names = {cls.__name__ for cls in _documented()}
    assert {"VerifyStatusResult", "VerifyEpoch", "Timing", "TimeReport", "VerifyTicket"} <= names


@pytest.mark.parametrize("cls", _documented(), ids=lambda cls: cls.__name__)
def test_the_docstrings_are_the_ones_pydantic_reads(cls: type[DocumentedModel]) -> None:
    docs = extract_docstrings_from_cls(cls, use_inspect=True)
    assert docs
    assert attribute_docs(cls) == docs
    for name, text in docs.items():
        assert cls.model_fields[name].description == text, name


def test_a_class_whose_string_reaches_the_margin_is_read_whole(tmp_path: Path) -> None:
    # A multi-line string at column 0 ends the block early: the module is parsed whole.
    module = tmp_path / "margin_models.py"
    module.write_text(
        textwrap.dedent(
            '''\
            from agent_habitat.verify.field_docs import DocumentedModel


            class Margin(DocumentedModel):
                first: int
                """One line."""
                second: str = """a default
            at the margin"""
                """Below the second."""
            '''
        ),
        encoding="utf-8",
    )
    spec = importlib.util.spec_from_file_location("margin_models", module)
    assert spec is not None
    assert spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules["margin_models"] = loaded
    try:
        spec.loader.exec_module(loaded)
        margin: type[BaseModel] = loaded.Margin
        assert margin.model_fields["first"].description == "One line."
        assert margin.model_fields["second"].description == "Below the second."
    finally:
        del sys.modules["margin_models"]
