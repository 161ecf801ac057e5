"""JSON for the CLI's light path, from the C accelerator `json` itself uses, without `json`.

Importing `json` imports `re` (its decoder compiles three patterns at import) and with it
`enum`, `functools` and the regex compiler: about a third of what a `habitat run` through a
host spends on imports. The parsing and the encoding are done by `_json`'s scanner and
encoder, the very code `json.loads` and `json.dumps` run, set up as `json` sets them up by
default (strict strings; NaN and Infinity read as floats; ASCII output). Where `_json` is
missing (an interpreter without it) `json` does the work.

`loads` raises ValueError for text that is not one JSON value, as `json.loads` does (its
JSONDecodeError is a ValueError); `dumps` is compact (no spaces after separators);
`dumps_indented` writes what `json.dumps(value, indent=2, ensure_ascii=False)` writes (the
`--json` a CLI call prints), with `_json`'s string escaping: `json` itself does that layout
in Python, and importing it cost 11 of the 31 ms of CPU of a `habitat verify --json` through
a host, about 70 ms of its wall at load 20.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

__all__ = ["dumps", "dumps_indented", "loads"]

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
try:
    from _json import encode_basestring

    _string: Any = encode_basestring
except ImportError:  # pragma: no cover - CPython has it
    _string = None


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


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    if key is True or key is False or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, float):
        return _float(key)
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _indented(value: Any, level: int, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_string(value))
    elif value is None or value is True or value is False:
        out.append("null" if value is None else "true" if value else "false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = "\n" + "  " * (level + 1)
        out.append("[")
        for i, item in enumerate(value):
            out.append(inner if i == 0 else "," + inner)
            _indented(item, level + 1, out)
        out.append("\n" + "  " * level + "]")
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = "\n" + "  " * (level + 1)
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append(inner if i == 0 else "," + inner)
            out.append(_string(_key(key)) + ": ")
            _indented(item, level + 1, out)
        out.append("\n" + "  " * level + "}")
    else:
        _not_serializable(value)


def dumps_indented(value: Any) -> str:
    """`value` as `json.dumps(value, indent=2, ensure_ascii=False)` writes it (TypeError for
    what JSON cannot hold)."""
    if _string is None:  # pragma: no cover
        import json

        return json.dumps(value, indent=2, ensure_ascii=False)
    out: list[str] = []
    _indented(value, 0, out)
    return "".join(out)
