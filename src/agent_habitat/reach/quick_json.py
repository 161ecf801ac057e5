"""JSON for the CLI's light path, from the C accelerator `json` itself uses, without `json`.

Importing `json` imports `re` (its decoder compiles three patterns at import) and with it
`enum`, `functools` and the regex compiler: about a third of what a `habitat run` through a
host spends on imports. The parsing and the encoding are done by `_json`'s scanner and
encoder, the very code `json.loads` and `json.dumps` run, set up as `json` sets them up by
default (strict strings; NaN and Infinity read as floats; ASCII output). Where `_json` is
missing (an interpreter without it) `json` does the work.

`loads` raises ValueError for text that is not one JSON value, as `json.loads` does (its
JSONDecodeError is a ValueError); `dumps` is compact (no spaces after separators).
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

__all__ = ["dumps", "loads"]

_WHITESPACE = " \t\n\r"


class _Context:
    """What `_json.make_scanner` reads from a decoder: `json.JSONDecoder()`'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


def _not_serializable(o: object) -> Any:
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


try:
    import _json

    _scan: Any = _json.make_scanner(_Context())  # type: ignore[arg-type]
    _encode: Any = _json.make_encoder(
        None, _not_serializable, _json.encode_basestring_ascii, None, ":", ",", False, False, True
    )
except (ImportError, AttributeError, TypeError):  # pragma: no cover - CPython has it
    _scan = _encode = None


def loads(text: str) -> Any:
    """The JSON value `text` holds (surrounding whitespace allowed); ValueError if none."""
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"expecting a JSON value at character {exc.value}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


def dumps(value: Any) -> str:
    """`value` as compact JSON text (ASCII, as `json.dumps` writes by default)."""
    if _encode is None:  # pragma: no cover
        import json

        return json.dumps(value, separators=(",", ":"))
    return "".join(_encode(value, 0))
