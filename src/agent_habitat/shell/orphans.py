"""A run whose wrapper shell died while processes of its own kept running (`RunSupervisor`
watches them instead of the shell)."""

from __future__ import annotations

import anyio.to_thread

from ..proc import ProcessRecord
from ..proc.spawner import Spawner

__all__ = ["Orphans"]


class Orphans:
    """The processes of a run whose wrapper shell died while they kept running: alive while
    any process carrying the run's marker (or in its session) lives."""

    def __init__(self, record: ProcessRecord, spawner: Spawner) -> None:
        self.record = record
        self.pid = record.pid
        self.stdin = None
        self._spawner = spawner

    def identify(self) -> ProcessRecord:
        return self.record

    def alive(self) -> bool:
        return bool(self._spawner.members(self.record))

    async def wait(self) -> int | None:
        while True:
            left = await anyio.to_thread.run_sync(self._spawner.members, self.record)
            if not left:
                return None
            await self._spawner.adopt(left[0]).wait()
