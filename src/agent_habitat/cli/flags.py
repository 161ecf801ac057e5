"""A verb's CLI subcommand, derived from its row and its args model.

Each field becomes a flag (`timeout_seconds` → `--timeout-seconds`) with one help line from
its description and default; the row's `positional` fields are bare positionals too, and
`tab` is accepted both ways (`habitat kill web`, `habitat kill --tab web`). Values are
validated by the model, so a bad one is an error naming its flag.
"""

from __future__ import annotations

import argparse
import types
import typing
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from ..verbs import Verb
from .common import FlagError, add_common, build_args

__all__ = ["add_verb_parser", "request_from"]

# Accepted as a positional and as a flag; every other positional is positional only.
_BOTH_WAYS = frozenset({"tab"})


def _positional_dest(name: str) -> str:
    return f"{name}_positional" if name in _BOTH_WAYS else name


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _plain_type(annotation: Any) -> Any:
    """`X | None` → X; `str | int` → str (the model converts what it accepts)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _plain_type(members[0])
        return str
    return annotation


def _help(field: FieldInfo) -> str:
    text = (field.description or "").rstrip(".")
    default = field.default
    if default not in (None, False, PydanticUndefined):
        text += f" (default: {default})"
    return text


def _add_flag(parser: argparse.ArgumentParser, name: str, field: FieldInfo) -> None:
    kind = _plain_type(field.annotation)
    origin = typing.get_origin(kind)
    spec: dict[str, Any] = {"dest": name, "help": _help(field)}
    if kind is bool:
        on = field.default is True
        spec["action"] = argparse.BooleanOptionalAction if on else "store_true"
        if on:
            spec["default"] = None
    elif origin is dict:
        spec.update(action="append", metavar="KEY=VALUE")
        spec["help"] += " (repeatable)"
    elif origin is list:
        (item,) = typing.get_args(kind)
        spec.update(action="append", type=item)
        spec["help"] += " (repeatable)"
    elif origin is Literal:
        spec["choices"] = list(typing.get_args(kind))
    elif kind in (int, float, str):
        spec["type"] = kind
        if name.endswith("_seconds"):
            spec["metavar"] = "S"
    else:
        raise TypeError(f"no CLI form for field {name!r} of type {field.annotation!r}")
    parser.add_argument(_flag(name), **spec)


def add_verb_parser(subparsers: Any, verb: Verb) -> argparse.ArgumentParser:
    """`habitat <verb.name> …`: positionals, one flag per field, `--json`, `--project`."""
    epilog = f"example:\n  {verb.example}" if verb.example else None
    parser: argparse.ArgumentParser = subparsers.add_parser(
        verb.cli_name,
        help=verb.summary,
        description=verb.summary[:1].upper() + verb.summary[1:] + ".",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fields = verb.args.model_fields
    for name in verb.positional:
        field = fields[name]
        optional = name in _BOTH_WAYS or not field.is_required()
        help_ = _help(field) + (f"; the same as {_flag(name)}" if name in _BOTH_WAYS else "")
        parser.add_argument(
            _positional_dest(name),
            metavar=name.upper(),
            nargs="?" if optional else None,
            help=help_,
        )
    for name, field in fields.items():
        if name not in verb.positional or name in _BOTH_WAYS:
            _add_flag(parser, name, field)
    add_common(parser)
    return parser


def _key_values(name: str, pairs: list[str]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise FlagError(f"{_flag(name)} {pair!r}: expected KEY=VALUE", name)
        out[key] = value
    return out or None


def request_from(verb: Verb, ns: argparse.Namespace) -> BaseModel:
    """The verb's args model from the parsed command line; FlagError names a bad flag."""
    values: dict[str, Any] = {}
    for name, field in verb.args.model_fields.items():
        value = getattr(ns, name, None)
        if name in _BOTH_WAYS and name in verb.positional:
            given = getattr(ns, _positional_dest(name))
            if given is not None and value is not None and given != value:
                raise FlagError(
                    f"{name} given twice ({given!r} and {_flag(name)} {value!r}); give it once",
                    name,
                )
            value = given if given is not None else value
        if value is not None and typing.get_origin(_plain_type(field.annotation)) is dict:
            value = _key_values(name, value)
        values[name] = value
    return build_args(verb.args, **values)
