"""Shared pieces of the CLI commands: opening the habitat, errors, JSON output."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
from pydantic import BaseModel, ValidationError

from ..errors import HabitatError, UsageError
from ..events import InMemoryEventBus
from ..shell import ShellHabitat
from ..store import Database, SqliteJournal
from ..workspace import Workspace, find_project_root

__all__ = [
    "add_common",
    "build_args",
    "emit_json",
    "journaled_bus",
    "open_shell",
    "run_command",
]

M = TypeVar("M", bound=BaseModel)


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the result model as JSON")
    parser.add_argument(
        "--project",
        type=Path,
        metavar="DIR",
        help="project (workspace) folder; default the git work tree of the cwd, else the cwd",
    )


def project_root(args: argparse.Namespace) -> Path:
    project: Path | None = args.project
    if project is not None:
        if not project.is_dir():
            raise UsageError(f"--project {project} is not a directory")
        return project.resolve()
    return find_project_root()


def open_shell(args: argparse.Namespace) -> Any:
    """`ShellHabitat.open` for the workspace the CLI is pointed at (an async context manager)."""
    root = project_root(args)
    return ShellHabitat.open(Workspace.for_project(root), project_root=root)


@contextmanager
def journaled_bus(root: Path) -> Iterator[InMemoryEventBus]:
    """A bus whose events land in the workspace journal, where `habitat events` reads them."""
    db = Database(Workspace.for_project(root).ensure().db_path)
    try:
        yield InMemoryEventBus(str(root), SqliteJournal(db))
    finally:
        db.close()


def build_args(model: type[M], **values: Any) -> M:
    """Validate CLI values into a request model; errors name the flag."""
    try:
        return model.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        problems = "; ".join(
            f"--{'-'.join(str(p) for p in err['loc']).replace('_', '-')}: {err['msg']}"
            for err in exc.errors()
        )
        raise UsageError(problems) from exc


def emit_json(model: BaseModel) -> None:
    sys.stdout.write(model.model_dump_json(indent=2) + "\n")


def run_command(body: Callable[[], Awaitable[int]]) -> int:
    """Run an async command body; HabitatErrors become messages and exit codes."""
    try:
        return anyio.run(body)
    except UsageError as exc:
        print(f"habitat: {exc}", file=sys.stderr)
        return 2
    except HabitatError as exc:
        print(f"habitat: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
