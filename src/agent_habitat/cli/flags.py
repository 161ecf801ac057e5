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

from ..verbs import AnyVerb
from .common import FlagError, add_common, build_args

__all__ = ["add_verb_parser", "argument_specs", "request_from"]

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


def _flag_spec(name: str, field: FieldInfo) -> dict[str, Any]:
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
        # `--files a b` and `--files a --files b` both give [a, b].
        (item,) = typing.get_args(kind)
        spec.update(action="extend", nargs="+", metavar=name.upper())
        if typing.get_origin(item) is Literal:
            spec["choices"] = list(typing.get_args(item))
        else:
            spec["type"] = item
        spec["help"] += " (one or more; repeatable)"
    elif origin is Literal:
        spec["choices"] = list(typing.get_args(kind))
    elif kind in (int, float, str):
        spec["type"] = kind
        if name.endswith("_seconds"):
            spec["metavar"] = "S"
    else:
        raise TypeError(f"no CLI form for field {name!r} of type {field.annotation!r}")
    return spec


def argument_specs(verb: AnyVerb) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """`(names, add_argument keywords)` of each argument of `habitat <verb>`, in order,
    without `--json` and `--project` (`add_common`). `cli.verb_argv` keeps a copy of them
    (without the help texts) to parse a command line the host will answer without
    importing the models; a test keeps the two equal."""
    fields = verb.args.model_fields
    specs: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    for name in verb.positional:
        field = fields[name]
        optional = name in _BOTH_WAYS or not field.is_required()
        help_ = _help(field) + (f"; the same as {_flag(name)}" if name in _BOTH_WAYS else "")
        spec: dict[str, Any] = {"metavar": name.upper(), "help": help_}
        if optional:
            spec["nargs"] = "?"
        specs.append(((_positional_dest(name),), spec))
    for name, field in fields.items():
        if name not in verb.positional or name in _BOTH_WAYS:
            specs.append(((_flag(name),), _flag_spec(name, field)))
    return specs


def add_verb_parser(subparsers: Any, verb: AnyVerb) -> argparse.ArgumentParser:
    """`habitat <verb.name> …`: positionals, one flag per field, `--json`, `--project`."""
    epilog = f"example:\n  {verb.example}" if verb.example else None
    parser: argparse.ArgumentParser = subparsers.add_parser(
        verb.cli_name,
        help=verb.summary,
        description=verb.summary[:1].upper() + verb.summary[1:] + ".",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for names, spec in argument_specs(verb):
        parser.add_argument(*names, **spec)
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


def request_from(verb: AnyVerb, ns: argparse.Namespace) -> BaseModel:
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
    only_positional = tuple(name for name in verb.positional if name not in _BOTH_WAYS)
    request: BaseModel = build_args(verb.args, only_positional, **values)
    return request
