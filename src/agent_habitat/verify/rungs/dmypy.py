"""The warm `dmypy` daemon the habitat keeps per workspace.

Its status file lives in the workspace state folder, so every habitat process of the
workspace (CLI, host) shares the one daemon. A daemon found dead is restarted by the next
check, and the result says so.

A daemon has an owner: the habitat process that started it (the host, an MCP server, a
foreground `habitat verify`), or that took it over when its owner had died. The owner
stops it when it closes (`release`), so no daemon outlives every habitat process of its
workspace; `habitat status` lists it with its owner. Its own idle timeout is the last resort
when the owner is killed and no habitat process of the workspace opens again.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

import psutil

from ...proc import ProcessRecord, is_alive, kill_tree, process_create_time
from ...workspace import Workspace, write_private
from ..command import child_env, run_command
from ..environments import ProjectEnv

__all__ = ["IDLE_TIMEOUT_S", "MYPY_FLAGS", "DmypyDaemon", "describe_warm", "release"]

IDLE_TIMEOUT_S = 3600
# Machine-readable text output whatever the project's own mypy settings say.
MYPY_FLAGS = (
    "--show-column-numbers",
    "--show-error-codes",
    "--no-color-output",
    "--no-error-summary",
    "--no-pretty",
)


class DmypyDaemon:
    def __init__(self, workspace: Workspace) -> None:
        self.dir = workspace.state_dir / "dmypy"
        self.status_file = self.dir / "status.json"
        self.log_file = self.dir / "daemon.log"
        self.owner_file = self.dir / "owner.json"

    def owner(self) -> ProcessRecord | None:
        """The habitat process the daemon belongs to, if one was recorded."""
        try:
            data = json.loads(self.owner_file.read_text(encoding="utf-8"))
            return ProcessRecord(int(data["pid"]), float(data["create_time"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def owned_here(self) -> bool:
        owner = self.owner()
        return owner is not None and owner.pid == os.getpid() and is_alive(owner)

    def orphaned(self) -> bool:
        """Alive with no living owner (its owner was killed before it could stop it)."""
        owner = self.owner()
        return self.state() == "alive" and (owner is None or not is_alive(owner))

    def claim(self) -> None:
        """This process owns the daemon unless a living habitat process already does."""
        owner = self.owner()
        if owner is not None and is_alive(owner):
            return
        created = process_create_time(os.getpid())
        data = json.dumps({"pid": os.getpid(), "create_time": created or 0.0})
        write_private(self.owner_file, data)

    def pid(self) -> int | None:
        try:
            data = json.loads(self.status_file.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        pid = data.get("pid")
        return pid if isinstance(pid, int) else None

    def record(self) -> ProcessRecord | None:
        pid = self.pid()
        if pid is None:
            return None
        created = process_create_time(pid)
        return ProcessRecord(pid, created) if created is not None else None

    def state(self) -> str:
        """`absent` (never started or stopped), `alive`, or `dead` (status file, no process)."""
        if not self.status_file.exists():
            return "absent"
        record = self.record()
        return "alive" if record is not None and is_alive(record) else "dead"

    def prepare(self) -> str | None:
        """Clear a dead daemon's status file and claim the daemon; the note to report, if any."""
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.claim()
        state = self.state()
        if state == "dead":
            pid = self.pid()
            self.status_file.unlink(missing_ok=True)
            return f"dmypy daemon (pid {pid}) was dead; restarted"
        if state == "absent":
            return "dmypy daemon started (cold check)"
        return self._continued()

    def _continued(self) -> str | None:
        """A live daemon left stopped is continued, and said. A host stops the warm-up's
        dmypy start while a verify runs (runner/give_way.py) and continues it when it closes;
        a host killed meanwhile (SIGKILL, the OOM killer) leaves the daemon, a session of its
        own, stopped for good, and every check asked of it would wait out its timeout."""
        pid = self.pid()
        try:
            if pid is None or psutil.Process(pid).status() != psutil.STATUS_STOPPED:
                return None
            os.killpg(os.getpgid(pid), signal.SIGCONT)
        except (psutil.Error, OSError):
            return None  # gone meanwhile, or not ours
        return f"dmypy daemon (pid {pid}) was left stopped by an earlier host; continued"

    def argv(self, env: ProjectEnv, targets: list[str]) -> list[str]:
        prefix, extra = env.mypy("mypy.dmypy")
        return [
            *prefix,
            "--status-file",
            str(self.status_file),
            "run",
            "--timeout",
            str(IDLE_TIMEOUT_S),
            "--log-file",
            str(self.log_file),
            "--",
            *MYPY_FLAGS,
            *extra,
            *targets,
        ]

    async def stop(self, env: ProjectEnv, cwd: Path) -> None:
        """Stop the daemon politely, then make sure it is gone."""
        if not self.status_file.exists():
            return
        record = self.record()
        prefix, _ = env.mypy("mypy.dmypy")
        await run_command(
            [*prefix, "--status-file", str(self.status_file), "stop"],
            cwd=cwd,
            env=child_env(),
            spool=self.dir / "stop.out",
            limit_s=15,
            cap=4096,
        )
        if record is not None and is_alive(record):
            await kill_tree(record)
        self.status_file.unlink(missing_ok=True)

    async def stop_now(self) -> None:
        """Stop it without its client (no project environment needed): SIGTERM, then KILL."""
        record = self.record()
        if record is not None and is_alive(record):
            await kill_tree(record, grace=2.0)
        self.status_file.unlink(missing_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.owner_file.unlink()


async def release(workspace: Workspace) -> bool:
    """At the close of a habitat process: stop the daemon it owns, or one whose owner died.
    True when one was stopped."""
    daemon = DmypyDaemon(workspace)
    if daemon.state() == "absent" or not (daemon.owned_here() or daemon.orphaned()):
        return False
    await daemon.stop_now()
    return True


def describe_warm(workspace: Workspace) -> str:
    """One line per warm daemon of the workspace, with its owner (for `habitat status`)."""
    daemon = DmypyDaemon(workspace)
    state = daemon.state()
    if state != "alive":
        return f"warm: none (dmypy daemon {state})\n"
    owner = daemon.owner()
    if owner is None or not is_alive(owner):
        whose = "no living owner: the next habitat process of the workspace stops it"
    else:
        whose = f"owned by pid {owner.pid}, stops when that process ends"
    return f"warm: dmypy daemon pid {daemon.pid()} ({whose})\n"
