"""What the verify verbs take: `verify_run`, `verify_status`, `verify_cancel` (DESIGN §4–5).
The verb table (verbs/verify.py) lists them; the slot (slot.py) answers them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...limits import check_path
from ..models import Policy, RungName

__all__ = ["Progress", "VerifyCancelArgs", "VerifyRunArgs", "VerifyStatusArgs"]

Progress = Callable[[float, str], Awaitable[None]]
"""(a value that only grows, what is happening) → None: how a verb reports progress."""


def _listed(value: Any) -> Any:
    # A model often passes one path as a bare string; it means a list of one.
    return [value] if isinstance(value, str) else value


class VerifyRunArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    policy: Policy | None = Field(
        default=None,
        description="minimal (diagnose.files), standard (default: + compile.project, "
        "test.scoped), strict (+ build.affected), ci_parity (all).",
    )
    rung: list[RungName] | None = Field(
        default=None,
        description="Run exactly these rungs instead of the policy's.",
    )
    files: list[str] | None = Field(
        default=None, description="The change's files, instead of git's dirty set."
    )
    filter: list[str] | None = Field(
        default=None,
        description="pytest node ids, paths or '-k EXPR', instead of the affected tests.",
    )
    wait: bool = Field(
        default=False,
        description="Wait for the verdict instead of returning the task.",
    )

    _as_lists = field_validator("rung", "files", "filter", mode="before")(_listed)

    @field_validator("files")
    @classmethod
    def _paths(cls, files: list[str] | None) -> list[str] | None:
        for name in files or ():
            check_path(name)
        return files


class VerifyStatusArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    task: str | None = Field(
        default=None, description="A verify_run task id; default the newest epoch."
    )


class VerifyCancelArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    task: str | None = Field(default=None, description="A task id from verify_run.")
