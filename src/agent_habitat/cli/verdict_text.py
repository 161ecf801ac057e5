"""The verdict of a climb as text, from the JSON of its `LadderResult`, with the standard
library alone: the one-shot path and the path through the workspace host print the same
lines from the same data (the host's answer is JSON; parsing it back into models would cost
the CLI the imports the host path exists to avoid).

Colours only for a terminal; a pipe or an agent reads plain whole lines.
"""

from __future__ import annotations

from ..terminal_words import for_terminal

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any, TextIO

__all__ = ["render_timing", "render_verdict"]

_COLOUR = {
    "green": "1;32",
    "red": "1;31",
    "skipped": "2",
    "error": "1;33",
    "cancelled": "33",
    "died": "1;35",
    "incomplete": "1;33",
    "nothing_to_verify": "1;34",
    "stale": "1;33",
}
_DIAGNOSTICS_SHOWN = 8
_PREEXISTING_SHOWN = 5
_PARTS = (
    ("rungs_s", "rungs"),
    ("prepare_s", "snapshot+selection"),
    ("baseline_s", "warm-up"),
    ("queue_s", "queued"),
    ("coalesce_s", "coalesced"),
    ("start_s", "startup"),
)


class _Paint:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, text: str, state: str | None = None, code: str | None = None) -> str:
        sgr = code or _COLOUR.get(state or "")
        return f"\x1b[{sgr}m{text}\x1b[0m" if self.colour and sgr else text


def _where(diag: dict[str, Any]) -> str:
    where = ":".join(str(diag[k]) for k in ("file", "line", "col") if diag.get(k) is not None)
    message = (diag.get("message") or "").splitlines()
    return f"{where}: {diag.get('code') or diag.get('severity')}: {message[0] if message else ''}"


def _rung_lines(rung: dict[str, Any], paint: _Paint) -> list[str]:
    state = str(rung.get("state"))
    duration = float(rung.get("duration_s") or 0.0)
    name = str(rung.get("rung"))
    head = f"{paint(f'{name:<16}', code='1')}{paint(f'{state:<9}', state)}{duration:6.2f}s"
    out = [f"{head}  {rung.get('tool') or ''}".rstrip()]
    if rung.get("reason"):
        out.append(f"    {for_terminal(rung['reason'])}")
    diagnostics: list[dict[str, Any]] = rung.get("diagnostics") or []
    command = rung.get("command_line") or ""
    if command and (state in ("error", "died") or (state == "red" and not diagnostics)):
        out.append(paint(f"    $ {command[:300]}", code="2"))
    out.extend(paint(f"    note: {note}", code="2;3") for note in rung.get("notes") or [])
    # A warning (its severity given) is neither: it cannot make the rung red.
    errors = [d for d in diagnostics if d.get("severity", "error") == "error"]
    new = [d for d in errors if not d.get("preexisting")]
    old = [d for d in errors if d.get("preexisting")]
    out.extend(paint(f"    {_where(d)}", code="31") for d in new[:_DIAGNOSTICS_SHOWN])
    if len(new) > _DIAGNOSTICS_SHOWN:
        out.append(f"    … {len(new) - _DIAGNOSTICS_SHOWN} more new")
    if old:
        # Listed, never hidden: they are at HEAD too, so they do not decide the rung.
        out.append(paint(f"    {len(old)} pre-existing (at {rung.get('baseline')}):", code="2"))
        out.extend(paint(f"      {_where(d)}", code="2") for d in old[:_PREEXISTING_SHOWN])
        if len(old) > _PREEXISTING_SHOWN:
            out.append(paint(f"      … {len(old) - _PREEXISTING_SHOWN} more", code="2"))
    output = rung.get("output") or ""
    if state in ("died", "error") and output and not diagnostics:
        out.append(paint("    " + "\n".join(output.strip().splitlines()[-5:]), code="2"))
    if rung.get("spool") and state not in ("green", "skipped"):
        # The runner's `str` of a path (`rungs.context`): shown as it is, without `pathlib`.
        out.append(paint(f"    output: {rung['spool']}", code="2"))
    return out


def render_timing(timing: dict[str, Any] | None) -> str:
    """`waited 2.41s = rungs 1.20s + snapshot+selection 0.50s + warm-up 0.71s`, or ''."""
    if not timing:
        return ""
    # Parts under 5 ms would read "0.00s": they are in the model, not worth a word here.
    parts = [
        f"{label} {timing[key]:.2f}s" for key, label in _PARTS if (timing.get(key) or 0) >= 0.005
    ]
    return f"waited {timing['wall_s']:.2f}s" + (f" = {' + '.join(parts)}" if parts else "")


def render_verdict(
    result: dict[str, Any], out: TextIO, *, colour: bool = False, stale: list[str] | None = None
) -> None:
    """The climb's verdict, each rung with its diagnostics, the test selection, and where the
    wait went. `stale`: files that changed while it climbed (the verdict is not the tree's)."""
    paint = _Paint(colour)
    lines: list[str] = []
    rungs: list[dict[str, Any]] = result.get("rungs") or []
    for rung in rungs:
        lines.extend(_rung_lines(rung, paint))
    tests_ran = any(
        str(r.get("rung", "")).startswith("test.") and r.get("state") != "skipped" for r in rungs
    )
    selection = result.get("selection")
    if selection and tests_ran:  # a selection is the work of a test rung
        tests = selection.get("tests") or []
        what = "whole suite" if selection.get("full") else f"{len(tests)} test path(s)"
        lines.append(paint(f"selection: {what}", code="1"))
        reasons: list[str] = selection.get("reasons") or []
        lines.extend(paint(f"    {r}", code="2") for r in reasons[:6])
        if len(reasons) > 6:
            lines.append(paint(f"    … {len(reasons) - 6} more", code="2"))
    state = str(result.get("state"))
    touched: list[str] = result.get("touched") or []
    shown = ", ".join(touched[:6]) + (" …" if len(touched) > 6 else "")
    lines.append(
        f"{paint('ladder ', code='1')}{paint(state.upper().replace('_', ' '), state)}"
        f"  policy {result.get('policy')}  snapshot {result.get('snapshot')}"
        f"  {float(result.get('duration_s') or 0.0):.2f}s"
        + paint(f"  touched: {shown or 'nothing'}", code="2")
    )
    if result.get("reason"):
        lines.append(paint(f"    {for_terminal(result['reason'])}", state))
    if stale:
        listed = ", ".join(stale[:5]) + (" …" if len(stale) > 5 else "")
        lines.append(paint(f"    stale: {listed} changed while it climbed; verify again", "stale"))
    if waited := render_timing(result.get("timing")):
        lines.append(paint(waited, code="2"))
    out.write("\n".join(lines) + "\n")
