"""The substrate: a fresh folder per test task with a temp dir, an SQLite database (a copy
of the configured template, or empty) and free ports (DESIGN §5 "Substrate").

Tests that write to a database or bind a port never see the leftovers of an earlier run
(seed 002, "state bleeding"): every `test.scoped` / `test.full` task gets its own, and it is
removed afterwards — kept when the task failed and `keep_failed` is set. A tiny pytest
plugin, loaded through `PYTEST_ADDOPTS`, writes the node id of the test it starts into the
folder, so a process that dies by a signal can be reported with the test it was running.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio.to_thread

from ...workspace import private_dirs
from .config import SubstrateConfig

__all__ = ["PLUGIN_MODULE", "Substrate", "SubstrateFactory"]

PLUGIN_MODULE = "habitat_substrate_plugin"
_CURRENT_TEST = "current-test"
_PLUGIN = f'''"""Written by agent-habitat: records the test pytest starts, for crash reports."""
import os

_PATH = os.path.join(os.environ.get("HABITAT_SUBSTRATE_DIR", "."), "{_CURRENT_TEST}")


def pytest_runtest_logstart(nodeid, location):
    with open(_PATH, "w", encoding="utf-8") as f:
        f.write(nodeid)
'''


@dataclass
class Substrate:
    """One task's substrate; `env` is what its process gets."""

    task: str
    dir: Path
    db: Path
    ports: list[int]
    env: dict[str, str] = field(default_factory=dict)
    failed: bool = False

    def current_test(self) -> str | None:
        try:
            text = (self.dir / _CURRENT_TEST).read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return text or None

    def mark_failed(self) -> None:
        self.failed = True


class SubstrateFactory:
    """Creates and removes substrates under the workspace's `substrates/` folder."""

    def __init__(self, base: Path, config: SubstrateConfig, root: Path | None = None) -> None:
        self.base = base
        self.config = config
        self.root = root
        # Ports handed to live substrates: two concurrent tasks never get the same one.
        self._ports_in_use: set[int] = set()

    def _template(self) -> Path | None:
        if self.config.sqlite_template is None:
            return None
        path = Path(self.config.sqlite_template)
        if not path.is_absolute() and self.root is not None:
            path = self.root / path
        return path

    def _free_ports(self, count: int) -> list[int]:
        ports: list[int] = []
        with contextlib.ExitStack() as stack:
            # All sockets stay bound until every port is chosen, so the kernel gives distinct ones.
            while len(ports) < count:
                sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
                sock.bind(("127.0.0.1", 0))
                port = int(sock.getsockname()[1])
                if port not in self._ports_in_use:
                    ports.append(port)
        self._ports_in_use.update(ports)
        return ports

    def create(self, task: str) -> Substrate:
        """Make a fresh substrate for `task` (blocking, a few milliseconds)."""
        folder = self.base / f"{task}-{secrets.token_hex(4)}"
        tmp = folder / "tmp"
        plugin_dir = folder / "plugin"
        private_dirs(tmp)  # `substrates/` too: mkdir(parents=True) would make it 0755
        plugin_dir.mkdir(mode=0o700)
        db = folder / "db.sqlite3"
        template = self._template()
        if template is not None:
            shutil.copyfile(template, db)
        else:
            # SQLite treats a zero-length file as an empty database.
            db.touch()
        (plugin_dir / f"{PLUGIN_MODULE}.py").write_text(_PLUGIN, encoding="utf-8")
        ports = self._free_ports(self.config.ports)
        python_path = os.pathsep.join(
            p for p in (str(plugin_dir), os.environ.get("PYTHONPATH")) if p
        )
        addopts = os.environ.get("PYTEST_ADDOPTS", "")
        if f"-p {PLUGIN_MODULE}" not in addopts:  # a habitat inside a substrate: load it once
            addopts = f"{addopts} -p {PLUGIN_MODULE}".strip()
        env = {
            "HABITAT_SUBSTRATE_DIR": str(folder),
            "HABITAT_SUBSTRATE_DB": str(db),
            "HABITAT_SUBSTRATE_PORT": str(ports[0]) if ports else "",
            "HABITAT_SUBSTRATE_PORTS": ",".join(str(p) for p in ports),
            "TMPDIR": str(tmp),
            "PYTHONPATH": python_path,
            "PYTEST_ADDOPTS": addopts,
        }
        return Substrate(task=task, dir=folder, db=db, ports=ports, env=env)

    def remove(self, substrate: Substrate) -> bool:
        """Remove it unless it failed and `keep_failed` is set; True when removed."""
        self._ports_in_use.difference_update(substrate.ports)
        if substrate.failed and self.config.keep_failed:
            return False
        shutil.rmtree(substrate.dir, ignore_errors=True)
        return True

    @contextlib.asynccontextmanager
    async def lease(self, task: str) -> AsyncIterator[Substrate]:
        """A fresh substrate for the duration of one task."""
        substrate = await anyio.to_thread.run_sync(self.create, task)
        try:
            yield substrate
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.remove, substrate)
