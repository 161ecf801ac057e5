"""`[tool.habitat.host]` — how long an unused host stays up."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agent_habitat.config import load_pyproject, load_section

__all__ = ["HostConfig", "load_host_config"]


class HostConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    idle_seconds: float = Field(default=1800.0, ge=0)
    """With no client connected and no run running for this long, the host exits; 0: never."""


def load_host_config(root: Path | None, environ: Mapping[str, str] | None = None) -> HostConfig:
    """From the project's pyproject.toml, overridden by `HABITAT_HOST_IDLE_SECONDS`."""
    return load_section(
        HostConfig,
        load_pyproject(root).get("host", {}),
        where="[tool.habitat.host]",
        env_prefix="HABITAT_HOST_",
        environ=environ,
    )
