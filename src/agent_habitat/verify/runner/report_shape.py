"""The shape of the verify reports' JSON (`report.py`'s models), standard library only: which
fields, in which order, of which JSON types. `habitat status` with no host reads a recorded
report without pydantic (`cli/status_quiet.py`) only when its JSON has exactly this shape:
then validating it and dumping it again, as the full path does, gives the same data and the
same text. Anything else (a record an older habitat wrote, a float JSON would write another
way) is left to the full path. A test keeps this table equal to the models."""

from __future__ import annotations

from ..ladder_names import POLICIES, RUNGS

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

__all__ = ["LITERALS", "SHAPES", "fits", "json_floats_agree"]

LITERALS: dict[str, tuple[str, ...]] = {
    "RungName": RUNGS,
    "Policy": tuple(POLICIES),
    "Severity": ("error", "warning", "note"),
    "ReportState": (
        "queued",
        "running",
        "stale",
        "green",
        "red",
        "incomplete",
        "nothing_to_verify",
        "error",
        "cancelled",
        "died",
        "lost",
    ),
}
"""The values of each `Literal` a report's field takes."""

SHAPES: dict[str, tuple[tuple[str, str], ...]] = {
    "DiagnosticLine": (
        ("file", "str?"),
        ("line", "int?"),
        ("col", "int?"),
        ("code", "str?"),
        ("severity", "Severity"),
        ("message", "str"),
        ("source", "str"),
        ("preexisting", "bool"),
        ("text", "str?"),
    ),
    "RungReport": (
        ("rung", "RungName"),
        ("task", "str"),
        ("state", "str"),
        ("reason", "str?"),
        ("tool", "str?"),
        ("duration_s", "float?"),
        ("exit_code", "int?"),
        ("signal", "str?"),
        ("new_findings", "int"),
        ("preexisting_findings", "int"),
        ("diagnostics", "[DiagnosticLine]"),
        ("notes", "[str]"),
        ("output_tail", "str?"),
        ("command_line", "str?"),
        ("spool", "str?"),
    ),
    "Timing": (
        ("wall_s", "float"),
        ("rungs_s", "float"),
        ("queue_s", "float?"),
        ("coalesce_s", "float?"),
        ("baseline_s", "float?"),
        ("prepare_s", "float?"),
        ("start_s", "float?"),
    ),
    "EpochReport": (
        ("epoch", "int"),
        ("task", "str"),
        ("state", "ReportState"),
        ("green", "bool"),
        ("covers", "[RungName]"),
        ("verified_state", "str?"),
        ("stale", "bool"),
        ("changed", "[str]"),
        ("changed_count", "int"),
        ("moved_while_running", "bool"),
        ("snapshot", "str?"),
        ("head", "str?"),
        ("policy", "Policy?"),
        ("requests", "int"),
        ("superseded_by", "str?"),
        ("touched", "[str]"),
        ("touched_count", "int"),
        ("rungs", "[RungReport]"),
        ("reason", "str?"),
        ("selection", "str?"),
        ("notes", "[str]"),
        ("duration_s", "float?"),
        ("timing", "Timing?"),
        ("finished_at", "float?"),
    ),
}
"""Each model's fields in order, with their kind: `str`, `int`, `float`, `bool`, a model's
or a literal's name; `[kind]` a list of it; a trailing `?` also takes null."""

_PLAIN = {"str": str, "int": int, "float": float, "bool": bool}
_FLOATS_ALIKE = (1e-4, 1e16)
"""pydantic writes a float as Python's `json` does inside this range (0.0 too); outside it,
not always (`1e-05` is `0.00001` there)."""


def fits(value: Any, kind: str) -> bool:
    """Whether `value` (parsed JSON) is what a field of `kind` holds, exactly as the model
    would dump it after validating it."""
    if kind.endswith("?"):
        return value is None or fits(value, kind[:-1])
    if kind.startswith("["):
        return isinstance(value, list) and all(fits(v, kind[1:-1]) for v in value)
    plain = _PLAIN.get(kind)
    if plain is not None:  # exactly: a bool is no int here, an int no float
        return type(value) is plain
    if kind in LITERALS:
        return type(value) is str and value in LITERALS[kind]
    fields = SHAPES[kind]
    return (
        type(value) is dict
        and list(value) == [name for name, _ in fields]
        and all(fits(value[name], sub) for name, sub in fields)
    )


def json_floats_agree(value: Any) -> bool:
    """Whether every float in `value` is written alike by Python's `json` and by pydantic."""
    if type(value) is float:
        low, high = _FLOATS_ALIKE
        return value == 0.0 or low <= abs(value) < high
    if type(value) is dict:
        return all(json_floats_agree(v) for v in value.values())
    if type(value) is list:
        return all(json_floats_agree(v) for v in value)
    return True
