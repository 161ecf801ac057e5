"""The structured content of a tool result as it goes on the wire: each byte once, none idle.

Claude Code, VS Code, Codex and (by every report) Cursor hand the model the structured
content, serialized, in place of the text block (docs/result-shape.md). So the structured
content is what the model reads, and it is lean by these rules, in this order:

1. A field whose value is null, empty (`""`, `[]`, `{}`) or its declared default is left out.
2. A field equal to the call's argument of the same name is left out: the caller knows it;
   so is one equal to the server's default for it (`cwd` when it is the project root).
3. A field of a nested object equal to the same-named field of the object holding it is
   left out (the epoch inside `verify_run`'s result repeats its task, state and snapshot).
4. A field whose value follows from others (`DERIVED`) is left out when it does.
5. The output body is capped in serialized bytes (`OUTPUT_WIRE_BYTES`): JSON writes a newline
   as two bytes, and the model reads the escaped text. Head and tail are kept (the last line
   always), the middle is counted in `omitted_bytes` and left to `shell_last`; a failed run's
   error-looking lines among what is cut join its `error_lines` (`shell/error_lines.py`).
6. A finished green `verify_run` is its verdict: epoch, state, green and a summary of what
   was checked; the rest is one `verify_status` away.
7. A finished `verify_run` that is not green is what to fix (`_failure`): its state, each
   failing rung with its findings; where and how it ran is one `verify_status` away.

No rule leaves out a `state` that is `red`, `error` or `died`: the model never has to infer
the one value that matters from the object around it.

The result models themselves are unchanged: the CLI's `--json` and the host's JSON API dump
them whole; the `habitat://…` resources follow rules 1–4. `wire_schema` is the output schema
these lean dumps conform to: the model's schema with every field that a rule can leave out no
longer required.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agent_habitat.shell import error_lines
from agent_habitat.shell import models as m
from agent_habitat.shell.omitted import omitted_marker, split_omitted
from agent_habitat.verify.runner.report import (
    EpochReport,
    RungReport,
    VerifyCancelResult,
    VerifyRunResult,
    VerifyStatusResult,
    for_a_model,
)
from agent_habitat.verify.runner.text import checked, coverage, not_run

__all__ = [
    "DERIVED",
    "OUTPUT_WIRE_BYTES",
    "failed_verify",
    "fit",
    "fit_output",
    "lean_dump",
    "wire_schema",
]

OUTPUT_WIRE_BYTES = 16 * 1024
"""The output body's budget as the model reads it: bytes of its JSON-escaped text."""

Derived = Callable[[Any], bool]


# The size of the output: `cursor` while the run goes on (pass it as `since` for newer
# output), `output_bytes` once it has ended, neither when the output shown is all of it.
def _whole(result: m.RunResult | m.LastResult) -> bool:
    """The output is all there was, unaltered: its size is `output_bytes` (and the cursor)."""
    return result.omitted_bytes == 0 and result.output_bytes == len(result.output.encode())


def _green(result: VerifyRunResult) -> bool:
    """Finished green on the tree as it is: the whole ladder (`green`), or the rungs asked
    for (`covers`, where `green` is false and the summary says what was left out)."""
    epoch = result.result
    return epoch is not None and epoch.state == "green" and not epoch.stale


DERIVED: Mapping[type[BaseModel], Mapping[str, Derived]] = {
    m.RunResult: {
        "cursor": lambda r: r.state != "running" and r.cursor == r.output_bytes,
        "output_bytes": lambda r: (
            _whole(r) or (r.state == "running" and r.output_bytes == r.cursor)
        ),
        "omitted_bytes": lambda r: r.omitted_bytes == 0,  # absent: nothing was left out
        "timed_out": lambda r: r.timed_out == (r.state == "timed_out"),
        "pid": lambda r: r.state != "running",  # a finished run's pid names nothing
        "spool": lambda r: r.omitted_bytes == 0,  # the path matters when something is left out
    },
    m.LastResult: {
        "cursor": lambda r: r.state != "running" and r.cursor == r.output_bytes,
        "output_bytes": lambda r: (
            _whole(r) or (r.state == "running" and r.output_bytes == r.cursor)
        ),
        "running": lambda r: r.running == (r.state == "running"),
        "omitted_bytes": lambda r: r.omitted_bytes == 0,
        "spool": lambda r: r.omitted_bytes == 0,
    },
    m.KillResult: {
        "signal": lambda r: r.signal == "SIGTERM",  # the default: TERM, then KILL after grace
    },
    RungReport: {
        "task": lambda r: r.task.endswith(f".{r.rung}"),  # the epoch's task id + rung
        # Counts equal to the findings listed: the list says them.
        "new_findings": lambda r: (
            r.new_findings
            == sum(not d.preexisting and d.severity == "error" for d in r.diagnostics)
        ),
        "preexisting_findings": lambda r: (
            r.preexisting_findings
            == sum(d.preexisting and d.severity == "error" for d in r.diagnostics)
        ),
        "exit_code": lambda r: r.state == "green" and r.exit_code == 0,
        "spool": lambda r: r.state in ("green", "skipped"),  # the log matters when it failed
    },
    EpochReport: {
        "verified_state": lambda e: e.verified_state == e.state,
        "changed_count": lambda e: e.changed_count == len(e.changed),
        "touched_count": lambda e: e.touched_count == len(e.touched),
    },
    # The summary line is rendered from the epoch (state, snapshot, failing rung's reason):
    # with the epoch there it says nothing new; alone ("never verified") it is the answer.
    # Rule 6: a finished green verify_run is its verdict. The epoch's detail, task and snapshot
    # are one verify_status away; the summary says what was checked (`wire.verdict`).
    VerifyRunResult: {
        "summary": lambda r: r.result is not None and not _green(r),
        "result": _green,
        "task": _green,
        "snapshot": _green,
    },
    # A verdict of some rungs keeps its summary: state green with green false needs the words.
    VerifyStatusResult: {"summary": lambda r: r.epoch is not None and not r.epoch.covers},
}
"""Per result type: fields left out when the predicate says they follow from the others."""


def _cost(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode()) - 2


def _take(lines: list[str], budget: int, *, from_end: bool) -> tuple[str, int]:
    """Whole lines from one end within `budget` serialized bytes; a line too long for it
    alone is cut (keeping its end when taking from the end). Returns the text and its cost."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines) if from_end else lines:
        cost = _cost(line)
        if used + cost > budget:
            if not kept:  # one huge line (a minified bundle): keep what fits of it
                part = line
                while part and _cost(part) > budget:
                    cut = max(1, len(part) - (_cost(part) - budget))
                    part = part[-cut:] if from_end else part[:cut]
                kept.append(part)
                used = _cost(part)
            break
        kept.append(line)
        used += cost
    if from_end:
        kept.reverse()
    return "".join(kept), used


def fit_output(output: str, omitted_bytes: int, budget: int = OUTPUT_WIRE_BYTES) -> tuple[str, int]:
    """`output` cut to `budget` serialized bytes, head and tail kept; and the new omitted count."""
    fitted = _fit(output, omitted_bytes, budget)
    return fitted.text, fitted.omitted


@dataclass(frozen=True)
class _Fitted:
    text: str
    omitted: int
    dropped_head: str = ""
    """What the cut took from the end of the head, and from the start of the tail."""
    dropped_tail: str = ""


def _fit(output: str, omitted_bytes: int, budget: int) -> _Fitted:
    if _cost(output) <= budget:
        return _Fitted(output, omitted_bytes)
    found = split_omitted(output)
    if found is not None:
        head, _, tail = found
    else:
        middle = len(output) // 2
        cut = output.rfind("\n", 0, middle) + 1
        head, tail = output[:cut], output[cut:]
    room = budget - _cost(omitted_marker(omitted_bytes + len(output.encode())))
    # The tail first: its last line is what a model looks for (the verdict, the error).
    tail_part, tail_cost = _take(tail.splitlines(keepends=True), room - room // 2, from_end=True)
    head_part, _ = _take(head.splitlines(keepends=True), room - tail_cost, from_end=False)
    dropped = len(head.encode()) - len(head_part.encode())
    dropped += len(tail.encode()) - len(tail_part.encode())
    omitted = omitted_bytes + dropped
    return _Fitted(
        head_part + omitted_marker(omitted) + tail_part,
        omitted,
        head[len(head_part) :],
        tail[: len(tail) - len(tail_part)],
    )


def fit(result: BaseModel) -> BaseModel:
    """`result` with its output body within `OUTPUT_WIRE_BYTES` (results without one: as is).
    A failed run's error-looking lines among what the cut took join its `error_lines`. A
    verify result keeps each rung's first findings (`report.for_a_model`)."""
    if isinstance(result, VerifyRunResult) and result.result is not None:
        return result.model_copy(update={"result": for_a_model(result.result)})
    if isinstance(result, VerifyStatusResult | VerifyCancelResult) and result.epoch is not None:
        return result.model_copy(update={"epoch": for_a_model(result.epoch)})
    if isinstance(result, m.RunResult | m.LastResult):
        fitted = _fit(result.output, result.omitted_bytes, OUTPUT_WIRE_BYTES)
        if fitted.text is result.output:
            return result
        update: dict[str, Any] = {"output": fitted.text, "omitted_bytes": fitted.omitted}
        if error_lines.failed(result.state, result.exit_code, result.signal, _timed_out(result)):
            known = error_lines.ErrorLines(list(result.error_lines), result.error_lines_more)
            found = error_lines.find(fitted.dropped_head).then(known)
            found = found.then(error_lines.find(fitted.dropped_tail))
            update |= {"error_lines": found.lines, "error_lines_more": found.more}
        return result.model_copy(update=update)
    if isinstance(result, m.WaitResult):
        output, _ = fit_output(result.output, 0)
        if output is not result.output:
            return result.model_copy(update={"output": output})
    return result


def _timed_out(result: m.RunResult | m.LastResult) -> bool:
    return result.timed_out if isinstance(result, m.RunResult) else result.state == "timed_out"


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)


# The one value that matters is never left for the model to infer: a red (or broken) rung or
# epoch says so itself, even where its parent says the same (rule 3).
_NEVER_LEFT_OUT = frozenset({"red", "error", "died"})


def _lean(model: BaseModel, skip: Mapping[str, Any]) -> dict[str, Any]:
    derived = DERIVED.get(type(model), {})
    fields = type(model).model_fields
    values = {name: getattr(model, name) for name in fields}
    dumped = model.model_dump(mode="json")
    out: dict[str, Any] = {}
    for name, field in fields.items():
        value = values[name]
        if _empty(value):
            continue
        if name == "state" and value in _NEVER_LEFT_OUT:
            out[name] = dumped[name]
            continue
        if not field.is_required() and value == field.get_default(call_default_factory=True):
            continue
        if (name in skip and skip[name] == value) or (name in derived and derived[name](model)):
            continue
        if isinstance(value, BaseModel):
            wire: Any = _lean(value, values)
        elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
            wire = [_lean(item, values) for item in value]
        else:
            wire = dumped[name]
        if not _empty(wire):
            out[name] = wire
    return out


def lean_dump(
    result: BaseModel, args: BaseModel | None = None, defaults: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The wire form of `result` for a call with `args`, on a server whose defaults are
    `defaults` (rules 1–4 of the module doc)."""
    known = dict(defaults or {})
    if args is not None:
        given = {k: getattr(args, k) for k in type(args).model_fields}
        known.update({k: v for k, v in given.items() if v is not None})
    out = _lean(result, known)
    if isinstance(result, VerifyRunResult) and result.result is not None and _green(result):
        epoch = result.result
        out["summary"] = "; ".join(filter(None, (checked(epoch), not_run(epoch), coverage(epoch))))
    elif isinstance(result, VerifyRunResult) and failed_verify(result):
        _failure(out)
    elif isinstance(result, VerifyRunResult) and result.state == "nothing_to_verify":
        # Its reason says why (and each rung's when they differ): the skipped rungs, HEAD,
        # policy and timings said it again, 960 bytes on a clean tree; verify_status has them.
        for name in ("rungs", "head", "policy", "timing", "finished_at"):
            out.get("result", {}).pop(name, None)
    return out


_FINISHED_NOT_GREEN = frozenset({"red", "error", "incomplete", "died", "cancelled"})
"""Rule 7 applies to these; a stale, queued or running result keeps everything."""
_FINDINGS_SAY = ("reason", "command_line", "notes")
"""What a rung with findings leaves out of a failed verify_run: its reason is rendered from
the first finding, its command and notes say how it ran, not what is wrong."""


def failed_verify(result: VerifyRunResult) -> bool:
    """A finished verify_run that is not green (and not stale): rule 7 applies."""
    epoch = result.result
    return epoch is not None and not epoch.stale and epoch.state in _FINISHED_NOT_GREEN


def _failure(out: dict[str, Any]) -> None:
    """Rule 7: a finished verify_run that is not green is what to fix. The state stays
    (`red`), and what to fix: each failing rung with its findings (file, line, code, message,
    the source line) or, without findings, its reason, command and output tail; the rungs that
    passed by name and tool. Where and how it ran (snapshot, HEAD, policy, where the time
    went, the passing rungs' timings, when it ended) is one `verify_status` away."""
    out.pop("snapshot", None)
    epoch = out.get("result", {})
    for name in ("head", "policy", "finished_at", "timing"):
        epoch.pop(name, None)
    for rung in epoch.get("rungs", []):
        if rung.get("state", epoch.get("state")) in ("green", "skipped"):
            # A rung that passed, by name, state and tool: its warnings are not what to fix.
            for name in ("duration_s", "notes", "diagnostics"):
                rung.pop(name, None)
            continue
        diagnostics = rung.get("diagnostics", [])
        if any(not d.get("preexisting") and "severity" not in d for d in diagnostics):
            for name in _FINDINGS_SAY:
                rung.pop(name, None)
        for diagnostic in diagnostics:
            if diagnostic.get("source") == rung.get("tool"):
                del diagnostic["source"]  # the rung's tool found it


def _droppable(name: str, prop: Mapping[str, Any], never: set[str]) -> bool:
    """Can a rule leave this property out? Conservative: when unsure, yes."""
    if name in never:
        return True
    kinds = [prop, *prop.get("anyOf", [])]
    types = {k.get("type") for k in kinds}
    if "null" in types or "$ref" in prop or any("$ref" in k for k in kinds):
        return True
    if types & {"array", "object"}:
        return True
    return "string" in types and "enum" not in prop and "const" not in prop


def wire_schema(result: type[BaseModel], args: type[BaseModel] | None = None) -> dict[str, Any]:
    """`result`'s JSON schema, requiring only the fields a lean dump always carries."""
    schema = result.model_json_schema()
    defs: dict[str, Any] = schema.get("$defs", {})
    objects = [(schema, result.__name__), *((d, n) for n, d in defs.items())]
    # Rule 3 may leave out any nested field that shares a name with a field of any object.
    names = {p for obj, _ in objects for p in obj.get("properties", {})}
    derived = {t.__name__: set(fields) for t, fields in DERIVED.items()}
    for obj, name in objects:
        never = set(derived.get(name, set()))
        never |= set(args.model_fields) if obj is schema and args is not None else set()
        never |= names if obj is not schema else set()
        props = obj.get("properties", {})
        required = [f for f in obj.get("required", []) if not _droppable(f, props[f], never)]
        if required:
            obj["required"] = required
        else:
            obj.pop("required", None)
    return schema
