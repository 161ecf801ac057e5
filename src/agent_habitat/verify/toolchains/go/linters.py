"""The linters a Go project configures, run by `diagnose.files` beside gofmt and go vet:
golangci-lint when the module has a `.golangci.yml` (`.yaml`, `.toml`, `.json`), staticcheck
when it has a `staticcheck.conf`. Each runs on the touched files' packages with the
project's own configuration (it reads it itself), its findings kept for the touched files
and compared with the same run on HEAD's export (head.py, where the configuration is
HEAD's). A configured linter that is not installed (not on PATH, nor in `go env GOBIN` or
`$GOPATH/bin`, where `go install` puts it) is said by name: the ladder is `incomplete`,
never green for a check it did not make."""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread

from ...models import Diagnostic, RungName, Severity
from ...rungs.context import RungContext
from ...tracebacks import relative
from .head import Step
from .parse import json_objects, visible

__all__ = [
    "CONFIGS",
    "Linted",
    "Linter",
    "configured",
    "parse_golangci",
    "parse_staticcheck",
    "run_linters",
    "step_of",
]

CONFIGS: dict[str, tuple[str, ...]] = {
    "golangci-lint": (".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"),
    "staticcheck": ("staticcheck.conf",),
}
_INSTALL = {
    "golangci-lint": "go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@latest",
    "staticcheck": "go install honnef.co/go/tools/cmd/staticcheck@latest",
}
_MESSAGE_CAP = 2000


@dataclass(frozen=True)
class Linter:
    name: str
    config: str
    """The file that configures it, relative to the root."""
    path: str | None
    """Its executable; None when it is not installed."""

    @property
    def install(self) -> str:
        return _INSTALL[self.name]


def _find(name: str, env: Mapping[str, str]) -> str | None:
    found = shutil.which(name, path=env.get("PATH"))
    if found:
        return found
    folders = [env.get("GOBIN", "")]
    gopath = env.get("GOPATH") or str(Path(env.get("HOME") or Path.home()) / "go")
    folders += [str(Path(p) / "bin") for p in gopath.split(os.pathsep) if p]
    for folder in folders:
        candidate = Path(folder) / name if folder else None
        if candidate is not None and candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def configured(root: Path, env: Mapping[str, str]) -> list[Linter]:
    """The linters the project configures at its root, each with its executable if found.
    Blocking (stats files)."""
    out: list[Linter] = []
    for name, files in CONFIGS.items():
        config = next((f for f in files if (root / f).is_file()), None)
        if config is not None:
            out.append(Linter(name, config, _find(name, env)))
    return out


def step_of(linter: Linter, dirs: Sequence[str]) -> Step:
    """The run of `linter` on the packages in `dirs` (`./a`, `.`), as a head.py `Step`."""
    assert linter.path is not None
    if linter.name == "staticcheck":
        return Step((linter.path, "-f", "json"), tuple(dirs), parse_staticcheck)
    argv = (
        linter.path,
        "run",
        "--output.json.path=stdout",
        "--output.text.path=",
        "--show-stats=false",
        "--max-issues-per-linter=0",
        "--max-same-issues=0",
        "--issues-exit-code=1",
    )
    return Step(argv, tuple(dirs), parse_golangci)


def _rel(path: str, at: Path) -> str:
    p = Path(path)
    return relative(str(p if p.is_absolute() else at / p), at)


def _severity(value: object) -> Severity:
    return "warning" if str(value).lower() in ("warning", "info", "ignored") else "error"


def parse_staticcheck(text: str, at: Path) -> list[Diagnostic]:
    """`staticcheck -f json`: one object a line, `{code, severity, location: {file, line,
    column}, message}`; `compile` is a package it could not type-check."""
    out: list[Diagnostic] = []
    for item in json_objects(text):
        if not isinstance(item, dict) or "message" not in item:
            continue
        where = item.get("location") or {}
        file = str(where.get("file") or "")
        out.append(
            Diagnostic(
                file=_rel(file, at) if file else None,
                line=int(where["line"]) if where.get("line") else None,
                col=int(where["column"]) if where.get("column") else None,
                code=str(item.get("code") or "staticcheck"),
                severity=_severity(item.get("severity")),
                message=visible(str(item["message"]))[:_MESSAGE_CAP],
                source="staticcheck",
            )
        )
    return out


def parse_golangci(text: str, at: Path) -> list[Diagnostic]:
    """`golangci-lint run --output.json.path=stdout`: `{"Issues": [{FromLinter, Text,
    Severity, Pos: {Filename, Line, Column}}], "Report": …}`."""
    out: list[Diagnostic] = []
    for report in json_objects(text):
        if not isinstance(report, dict) or not isinstance(report.get("Issues"), list):
            continue
        for issue in report["Issues"]:
            if not isinstance(issue, dict):
                continue
            pos = issue.get("Pos") or {}
            file = str(pos.get("Filename") or "")
            out.append(
                Diagnostic(
                    file=_rel(file, at) if file else None,
                    line=int(pos["Line"]) if pos.get("Line") else None,
                    col=int(pos["Column"]) if pos.get("Column") else None,
                    code=str(issue.get("FromLinter") or "golangci-lint"),
                    severity=_severity(issue.get("Severity") or "error"),
                    message=visible(str(issue.get("Text") or ""))[:_MESSAGE_CAP],
                    source="golangci-lint",
                )
            )
    return out


@dataclass
class Linted:
    """What the configured linters said of the touched files."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    """Their runs, for HEAD's side (not one that failed: HEAD's would fail the same way, and
    leave every other finding without a baseline)."""
    names: list[str] = field(default_factory=list)
    """The linters that ran (and gave their findings)."""
    notes: list[str] = field(default_factory=list)
    failed: str | None = None
    """Why a linter failed to run (its exit and last words), when one did."""
    missing: list[Linter] = field(default_factory=list)


async def run_linters(
    ctx: RungContext, rung: RungName, dirs: Sequence[str], mine: Collection[str]
) -> Linted:
    """Each linter the project configures on `dirs`, side by side; findings in `mine` kept."""
    out = Linted()
    linters = await anyio.to_thread.run_sync(configured, ctx.root, ctx.process_env())
    out.missing = [lin for lin in linters if lin.path is None]
    ready = [lin for lin in linters if lin.path is not None]
    done: dict[str, Step] = {}

    async def one(linter: Linter) -> None:
        step = step_of(linter, dirs)
        outcome = await ctx.run(
            rung, [*step.argv, *step.targets], suffix=f".{linter.name}.out", reap_leftovers=False
        )
        found = step.parse(outcome.text, ctx.root)
        if unread := [d for d in found if d.code == "config"]:
            # staticcheck's configuration it could not read: a finding in staticcheck.conf,
            # exit 1, and nothing checked.
            where = f"{unread[0].file}:{unread[0].line}"
            out.failed = f"{linter.name} could not read its configuration ({where}): "
            out.failed += unread[0].message[:200]
            return
        if (
            outcome.timed_out
            or outcome.exit_code not in step.ok_codes
            or (outcome.exit_code != 0 and not found)
        ):
            said = " ".join(outcome.tail.strip().splitlines())[-300:]
            out.failed = f"{linter.name} failed (exit {outcome.exit_code}): {said}"
            return
        kept = [d for d in found if d.file in mine]
        out.diagnostics.extend(kept)
        done[linter.name] = step
        note = f"{linter.name} (configured by {linter.config}) on {len(dirs)} package(s)"
        if len(found) > len(kept):
            note += f"; {len(found) - len(kept)} finding(s) in untouched files left out"
        out.notes.append(note)

    async with anyio.create_task_group() as group:
        for linter in ready:
            group.start_soon(one, linter)
    out.names = [lin.name for lin in ready if lin.name in done]
    out.steps = [done[name] for name in out.names]
    for linter in out.missing:
        out.notes.append(
            f"{linter.name} is configured ({linter.config}) but not installed (not on PATH, "
            f"nor in GOBIN or GOPATH/bin): {linter.install}"
        )
    return out
