"""The warm `dmypy` daemon the habitat keeps per workspace.

Its status file lives in the workspace state folder, so every habitat process of the
workspace (CLI, host) shares the one daemon. A daemon found dead is restarted by the next
check, and the result says so. It exits by itself after an idle hour.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...proc import ProcessRecord, is_alive, kill_tree, process_create_time
from ...workspace import Workspace
from ..command import child_env, run_command
from ..environments import ProjectEnv

__all__ = ["IDLE_TIMEOUT_S", "MYPY_FLAGS", "DmypyDaemon"]

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
        """Clear a dead daemon's status file; the note to report, if any."""
        self.dir.mkdir(parents=True, exist_ok=True)
        state = self.state()
        if state == "dead":
            pid = self.pid()
            self.status_file.unlink(missing_ok=True)
            return f"dmypy daemon (pid {pid}) was dead; restarted"
        if state == "absent":
            return "dmypy daemon started (cold check)"
        return None

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
