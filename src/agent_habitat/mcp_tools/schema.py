"""A tool's JSON schemas as `tools/list` sends them: what a model needs to call it, once.

A client hands the whole tool list to the model on every turn, so each schema byte is paid
again and again. Pydantic's schemas carry what says nothing to a model:

* `title` on every model and property (`"title": "Exit Code"` next to `exit_code`);
* `anyOf: [X, {"type": "null"}]` with `"default": null` for every optional field: a lean
  result never carries a null (wire rule 1), and an argument left out is the same as null;
* defaults that are the type's empty value (`false`, `0`, `""`, `[]`): absent means that;
* a union of string enums (`ReportState`) written as three `anyOf` branches;
* the root model's docstring, which the tool's description already says;
* a property's description that only says its name (`tab`: "Tab name.").

`lean_schema` takes them out and keeps everything that constrains a value (types, enums,
bounds, patterns, `required`, `additionalProperties`), the field descriptions and the
defaults that say something (`timeout_seconds: 30`). Shared models stay in `$defs`, each
referenced by `$ref` (the SDK's client resolves local references only, as the spec asks:
one `$defs` per tool).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from agent_habitat.verify.runner.report import VerifyCancelResult, VerifyRunResult

from .wire import wire_schema

__all__ = ["lean_schema", "output_schema"]

DESCRIBED_ELSEWHERE: Mapping[type[BaseModel], Mapping[str, str]] = {
    VerifyRunResult: {"result": "verify_status"},
    VerifyCancelResult: {"epoch": "verify_status"},
}
"""Nested results whose whole schema another tool of the same list carries (the epoch:
`verify_status`, listed whenever these are). Here they are an object, said to be that one."""
_MAX_INT64 = 2**63 - 1

_SAYS_NOTHING: tuple[Any, ...] = (None, False, 0, "", [], {})
"""Defaults that are what an absent field means anyway."""

_SCHEMA_MAPS = ("properties", "$defs", "patternProperties")
"""Keywords whose value maps names to schemas (a property may be called `title`)."""
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_ONE = ("items", "additionalProperties", "not", "contains")


def _says_nothing(value: Any) -> bool:
    # `0 == False` in Python: compare with the type too, so a default of 0.0 or False
    # is dropped only where it is that type's empty value.
    return any(type(value) is type(empty) and value == empty for empty in _SAYS_NOTHING)


def _is_null(node: Any) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "null" and len(node) == 1


def _merge_enums(branches: list[dict[str, Any]]) -> dict[str, Any] | None:
    """`anyOf` of string enums and consts as one enum, when that is all it is."""
    values: list[Any] = []
    for branch in branches:
        if branch.get("type", "string") != "string" or not set(branch) <= {"type", "enum", "const"}:
            return None
        if not all(isinstance(v, str) for v in branch.get("enum", [branch.get("const", "")])):
            return None
        values.extend(branch.get("enum", [branch["const"]] if "const" in branch else []))
    if not values:
        return None
    return {"enum": list(dict.fromkeys(values))}


def _names_only(description: Any, name: str | None) -> bool:
    """`description` says no more than the property's `name` (`tab`: "Tab name.")."""
    if name is None or not isinstance(description, str):
        return False
    said = description.strip().rstrip(".").casefold()
    spoken = name.replace("_", " ").casefold()
    return said in (spoken, f"{spoken} name")


def _node(
    schema: Mapping[str, Any], *, root: bool, shape: bool, name: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" or (key == "description" and (root or shape)):
            continue
        if key == "description" and _names_only(value, name):
            continue
        if key == "description" and "properties" in schema:
            continue  # a nested model's docstring: the property holding it says what it is
        if key == "default" and _says_nothing(value):
            continue
        if key == "maximum" and value == _MAX_INT64:  # pydantic's bound for a plain int
            continue
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {n: _node(sub, root=False, shape=shape, name=n) for n, sub in value.items()}
        elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {n: _node(sub, root=False, shape=shape) for n, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_node(sub, root=False, shape=shape) for sub in value if not _is_null(sub)]
        elif key in _SCHEMA_ONE and isinstance(value, Mapping):
            out[key] = _node(value, root=False, shape=shape)
        else:
            out[key] = value
    if (
        "enum" in out
        and out.get("type") == "string"
        and all(isinstance(v, str) for v in out["enum"])
    ):
        del out["type"]  # the enum says it
    return _flatten(out)


def _flatten(node: dict[str, Any]) -> dict[str, Any]:
    """One `anyOf` branch left (the null one gone) is the node itself; string enums merge."""
    branches = node.get("anyOf")
    if not isinstance(branches, list):
        return node
    merged = _merge_enums(branches)
    if merged is None and len(branches) == 1 and not set(branches[0]) & set(node):
        merged = branches[0]
    if merged is None:
        return node
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    return {**merged, **rest}


def lean_schema(schema: Mapping[str, Any], *, shape: bool = False) -> dict[str, Any]:
    """`schema` without what says nothing to a model (module doc); a new dict. `shape`: the
    descriptions go too (an output schema: what the fields mean is in the tool's description)."""
    return _shared(_node(schema, root=True, shape=shape))


def _referenced(node: Any) -> set[str]:
    if isinstance(node, Mapping):
        found = {node["$ref"].rsplit("/", 1)[-1]} if isinstance(node.get("$ref"), str) else set()
        for key, value in node.items():
            if key != "$defs":
                found |= _referenced(value)
        return found
    if isinstance(node, list):
        return set().union(*(_referenced(item) for item in node))
    return set()


def _uses(node: Any, counts: dict[str, int]) -> None:
    if isinstance(node, Mapping):
        if isinstance(ref := node.get("$ref"), str):
            counts[ref.rsplit("/", 1)[-1]] = counts.get(ref.rsplit("/", 1)[-1], 0) + 1
        for key, value in node.items():
            if key != "$defs":
                _uses(value, counts)
    elif isinstance(node, list):
        for item in node:
            _uses(item, counts)


def _inline(node: Any, defs: Mapping[str, Any], once: set[str]) -> Any:
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        name = ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None
        if name in once:
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return _inline({**defs[name], **rest}, defs, once)
        return {k: _inline(v, defs, once) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(item, defs, once) for item in node]
    return node


def _shared(schema: dict[str, Any]) -> dict[str, Any]:
    """A model referred to once is written where it is used; `$defs` keeps the shared ones
    (and those that refer to themselves), and none nothing refers to."""
    defs: dict[str, Any] = schema.get("$defs", {})
    if not defs:
        return schema
    counts: dict[str, int] = {}
    _uses(schema, counts)
    for definition in defs.values():
        _uses(definition, counts)
    recursive = {n for n, d in defs.items() if n in _referenced(d)}
    once = {n for n in defs if counts.get(n) == 1 and n not in recursive}
    out: dict[str, Any] = _inline(schema, defs, once)
    kept = {n: _inline(d, defs, once) for n, d in defs.items() if counts.get(n, 0) > 1}
    # A shared def used only from inside a def that was inlined is still used: recount.
    used: dict[str, int] = {}
    _uses(out, used)
    for definition in kept.values():
        _uses(definition, used)
    kept = {n: d for n, d in kept.items() if n in used}
    if kept:
        out["$defs"] = kept
    return out


def output_schema(result: type[BaseModel], args: type[BaseModel] | None = None) -> dict[str, Any]:
    """A tool's output schema: the shape its lean results have (`wire.wire_schema`), as
    `lean_schema(shape=True)` writes it, with nested results another tool describes referred to."""
    schema = wire_schema(result, args)
    props = schema.get("properties", {})
    for name, tool in DESCRIBED_ELSEWHERE.get(result, {}).items():
        props[name] = {"type": "object", "description": f"The epoch, as `{tool}` gives it."}
    # `shape` drops descriptions, so the referral goes in after the lean pass.
    lean = lean_schema(schema, shape=True)
    for name, prop in props.items():
        if name in DESCRIBED_ELSEWHERE.get(result, {}):
            lean["properties"][name] = prop
    return _shared(lean)
