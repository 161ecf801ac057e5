"""Shared pieces of the CLI commands: opening the habitat, errors, JSON output.

The habitat, anyio and pydantic load where they are used: `habitat rules`, `init` and
`dashboard` take their flags and errors from here without paying for them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..errors import ConfigError, HabitatError, UsageError
from ..project_folder import a_project
from .parser import JSON_ERRORS, note_input_refused

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator
    from contextlib import AbstractAsyncContextManager

    from pydantic import BaseModel

    from ..habitat import Habitat, VerifyRecord
    from ..reach.lock import HostRecord
    from ..shell.quiet_run import Handed

__all__ = [
    "JSON_ERRORS",
    "FlagError",
    "add_common",
    "build_args",
    "emit_json",
    "emit_project_write",
    "exit_code_of",
    "on_project",
    "open_habitat",
    "project_root",
    "report_error",
    "run_command",
    "running_host",
]

M = TypeVar("M", bound="BaseModel")


class WriteResult(Protocol):
    """What a command that writes one file of the project returns (`init`, `rules --write`)."""

    def to_json(self) -> str:
        """The result as its `--json` prints it."""
        ...


W = TypeVar("W", bound=WriteResult)


class FlagError(UsageError):
    """A bad command-line value; `field` names the argument (`--json` errors carry it)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message, field)


def flag_named(exc: HabitatError) -> str:
    """The error as the command line says it: an argument a service refused by its field
    name (`files`) is named by its flag (`--files`); a FlagError names its flags itself."""
    field = getattr(exc, "field", None)
    if field is None or isinstance(exc, FlagError):
        return str(exc)
    return f"--{field.replace('_', '-')}: {exc}"


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
            raise FlagError(f"--project {project} is not a directory", "project")
        try:
            return a_project(project, named="--project")
        except UsageError as exc:
            raise FlagError(str(exc), "project") from None
    from ..workspace import find_project_root

    return find_project_root()


def running_host(root: Path) -> HostRecord | None:
    """`reach.launcher.find_host`, its module loaded only when a process holds the host's
    lock: with no host, a command pays for neither the launcher (psutil) nor the record's
    model."""
    from ..proc.flocks import is_held
    from ..reach.files import HostFiles
    from ..workspace import Workspace

    if not is_held(HostFiles(Workspace.for_project(root)).lock):
        return None
    from ..reach.launcher import find_host

    return find_host(root)


def open_habitat(
    args: argparse.Namespace, handed: Handed | None = None
) -> AbstractAsyncContextManager[Habitat]:
    """`Habitat.open` for the workspace the CLI is pointed at (`--project`, else the cwd's);
    a one-shot command serves no verify runner (no file watcher for one command).
    `handed`: a run this process started already (`shell.quiet_run`)."""
    from ..habitat import Habitat
    from ..workspace import Workspace

    root = project_root(args)
    return Habitat.open(
        Workspace.for_project(root),
        project=root if args.project is not None else None,
        runner=False,
        handed=handed,
    )


async def on_project(habitat: Habitat | VerifyRecord, root: Path) -> None:
    """Outside a git work tree nothing opens a project at start; the CLI's folder is it."""
    if habitat.project.root is None:
        await habitat.project.open(root, source="cwd")


def build_args(model: type[M], positional: tuple[str, ...] = (), **values: Any) -> M:
    """Validate CLI values into a request model; errors name the flag, or the positional
    argument as `--help` shows it (`COMMAND`) for the fields in `positional`."""
    from pydantic import ValidationError

    try:
        return model.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        errors = exc.errors()

        def label(loc: tuple[int | str, ...]) -> str:
            if len(loc) == 1 and loc[0] in positional:
                return str(loc[0]).upper()
            return f"--{'-'.join(str(p) for p in loc).replace('_', '-')}"

        problems = "; ".join(f"{label(err['loc'])}: {err['msg']}" for err in errors)
        field = str(errors[0]["loc"][0]) if errors and errors[0]["loc"] else None
        raise FlagError(problems, field) from exc


def emit_json(model: BaseModel) -> None:
    sys.stdout.write(model.model_dump_json(indent=2) + "\n")


def exit_code_of(exc: HabitatError) -> int:
    """2 for bad input (usage, configuration the caller must fix), 1 for a refusal."""
    return 2 if isinstance(exc, UsageError | ConfigError) else 1


def report_error(exc: HabitatError, *, as_json: bool) -> int:
    """Say what went wrong on stderr — as `{"error", "field"}` JSON for scripts — and
    return the exit code."""
    if as_json:
        # FlagError, and the host's refusal of an argument (reach.client), name the field.
        field = getattr(exc, "field", None)
        sys.stderr.write(json.dumps({"error": flag_named(exc), "field": field}) + "\n")
    else:
        print(f"habitat: {flag_named(exc)}", file=sys.stderr)
    code = exit_code_of(exc)
    if code == 2:
        note_input_refused()
    return code


def emit_project_write(
    args: argparse.Namespace, label: str, write: Callable[[], W], said: Callable[[W], str]
) -> int:
    """Run a command that writes one file of the project (`init`, `rules --write`): its
    result as JSON or in words; a refusal or an unwritable file as an error and exit code."""
    try:
        try:
            result = write()
        except OSError as exc:
            raise HabitatError(f"cannot write {label}: {exc.strerror}") from exc
    except HabitatError as exc:
        return report_error(exc, as_json=bool(args.json))
    if args.json:
        sys.stdout.write(result.to_json() + "\n")
    else:
        sys.stdout.write(said(result))
    return 0


def run_command(body: Callable[[], Awaitable[int]], *, term_as_interrupt: bool = False) -> int:
    """Run an async command body; HabitatErrors become messages and exit codes.

    `term_as_interrupt` (the verify commands): SIGTERM (`timeout`, a harness, a supervisor)
    is taken as Ctrl-C: the body is cancelled, so what it started (a verify's rung
    processes) is killed before the process exits, instead of Python's default of dying at
    once and leaving them running."""
    import anyio

    with terms_as_interrupt() if term_as_interrupt else contextlib.nullcontext():
        try:
            return anyio.run(body)
        except HabitatError as exc:
            return report_error(exc, as_json=JSON_ERRORS.get())
        except KeyboardInterrupt:
            return 130


@contextlib.contextmanager
def terms_as_interrupt() -> Iterator[None]:
    """SIGTERM taken as Ctrl-C while the block runs (see `run_command`), unless this process
    already handles it its own way; a block inside another keeps the outer one's."""
    previous = None
    main = threading.current_thread() is threading.main_thread()  # signals are main-only
    if main and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        previous = signal.signal(signal.SIGTERM, _as_interrupt)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


# SIGTERM gives the command this long to cancel its work and exit; then the process ends
# regardless (a worker thread blocked in the kernel can never be cancelled).
TERM_GRACE_SECONDS = 1.5


def _as_interrupt(signum: int, frame: object) -> None:
    # The event loop's own Ctrl-C path: it cancels the main task, then raises
    # KeyboardInterrupt once the cancellation has run. The cancellation waits for worker
    # threads, and so does the interpreter's exit: the watchdog bounds both.
    watchdog = threading.Timer(TERM_GRACE_SECONDS, _exit_now, args=(128 + signum,))
    watchdog.daemon = True
    watchdog.start()
    signal.raise_signal(signal.SIGINT)


def _exit_now(code: int) -> None:
    # What the cancellation did not get to kill in time (a rung still in its grace) must not
    # outlive the command that started it.
    import psutil

    with contextlib.suppress(psutil.Error):
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                child.kill()
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)
