"""Generated sources: `[tool.habitat.generated.NAME]` inputs → outputs, and the command that
makes the outputs from the inputs (the Python counterpart of a source generator):

    [tool.habitat.generated.protos]
    inputs = ["protos/*.proto"]
    outputs = ["src/shop/*_pb2.py"]
    command = "python -m grpc_tools.protoc -Iprotos --python_out=src/shop protos/*.proto"

Globs are relative to the project root (`**` for any depth). A generator is *outdated*
when an input is newer than the oldest output, or no output exists yet. Then checks of
the outputs say nothing about the inputs: a green `diagnose.files` is provisional, and the
climb runs `build.affected` right after it, which runs the command and checks that the
outputs are fresh before any higher rung looks at the code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..config import load_pyproject
from ..errors import ConfigError
from .config import Command

__all__ = ["Generator", "load_generators", "outdated"]


class Generator(BaseModel):
    """One `[tool.habitat.generated.NAME]` table."""

    model_config = ConfigDict(extra="forbid")

    inputs: list[str] = Field(min_length=1)
    """Globs of the sources the outputs are made from."""
    outputs: list[str] = Field(min_length=1)
    """Globs of the files the command writes."""
    command: Command
    """A shell line (run by `/bin/sh -c` in the project root) or an argv list."""


def load_generators(root: Path) -> dict[str, Generator]:
    section: Any = load_pyproject(root).get("generated", {})
    if not isinstance(section, dict):
        raise ConfigError("[tool.habitat.generated] must be a table of generators")
    out: dict[str, Generator] = {}
    for name, table in section.items():
        where = f"[tool.habitat.generated.{name}]"
        if not isinstance(table, dict):
            raise ConfigError(
                f"{where} must be a table with inputs, outputs and command, e.g. "
                'inputs = ["protos/*.proto"], outputs = ["src/pkg/*_pb2.py"], command = "…"'
            )
        try:
            out[name] = Generator.model_validate(table)
        except ValidationError as exc:
            problems = "; ".join(
                f"{where}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            raise ConfigError(f"bad configuration: {problems}") from exc
    return out


def _matches(root: Path, patterns: list[str]) -> list[Path]:
    found: set[Path] = set()
    for pattern in patterns:
        found.update(p for p in root.glob(pattern) if p.is_file())
    return sorted(found)


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def why_outdated(root: Path, generator: Generator) -> str | None:
    """Why the outputs cannot be trusted, or None when they are at least as new as every
    input. Blocking (globs the tree)."""
    inputs = [(p, m) for p in _matches(root, generator.inputs) if (m := _mtime(p)) is not None]
    outputs = [(p, m) for p in _matches(root, generator.outputs) if (m := _mtime(p)) is not None]
    if not inputs:
        return None  # nothing to generate from
    if not outputs:
        return f"no file matches {', '.join(generator.outputs)}"
    newest_in, in_time = max(inputs, key=lambda pm: pm[1])
    oldest_out, out_time = min(outputs, key=lambda pm: pm[1])
    if in_time > out_time:
        return (
            f"{oldest_out.relative_to(root).as_posix()} is older than "
            f"{newest_in.relative_to(root).as_posix()}"
        )
    return None


def outdated(root: Path, generators: dict[str, Generator]) -> dict[str, str]:
    """Generator name → why it is outdated, for every outdated one. Blocking."""
    out: dict[str, str] = {}
    for name, generator in generators.items():
        why = why_outdated(root, generator)
        if why is not None:
            out[name] = why
    return out
