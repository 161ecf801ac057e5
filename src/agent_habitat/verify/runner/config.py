"""The runner's configuration: `[tool.habitat] coalesce_seconds` and `idle_seconds`, and
the `[tool.habitat.substrate]` table; `HABITAT_COALESCE_SECONDS` / `HABITAT_IDLE_SECONDS`
override the first two."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...config import load_pyproject, load_section
from ...errors import ConfigError

__all__ = ["RunnerConfig", "SubstrateConfig", "load_runner_config"]


# The descriptions are `Field`s, not attribute docstrings: every command reads this
# configuration at start, and pydantic reads an attribute docstring from the source by walking
# the frames and mapping every loaded module to its file first (`inspect.getmodule`): about a
# tenth of a one-shot `habitat run`'s CPU for these two models alone (issue 25).


class SubstrateConfig(BaseModel):
    """`[tool.habitat.substrate]`."""

    model_config = ConfigDict(extra="forbid")

    sqlite_template: str | None = Field(
        default=None,
        description="An SQLite file copied into every substrate (relative to the project "
        "root); else empty.",
    )
    ports: int = Field(
        default=1, ge=0, le=64, description="How many free TCP ports each substrate reserves."
    )
    keep_failed: bool = Field(
        default=False,
        description="Keep the substrate folder of a task that failed, for a post-mortem.",
    )


class RunnerConfig(BaseModel):
    """The verify runner's own keys of `[tool.habitat]`."""

    model_config = ConfigDict(extra="ignore")

    coalesce_seconds: float = Field(
        default=1.5,
        ge=0,
        le=60,
        description="Requests within this window of the first one join its run (which starts "
        "at once and\nrestarts with their union); 0: every later request supersedes the running "
        "one.",
    )
    idle_seconds: float = Field(
        default=300.0,
        gt=0,
        description="A gap with no call and no environment work longer than this is idle, not "
        "active time.",
    )
    substrate: SubstrateConfig = Field(
        default_factory=SubstrateConfig, description="`[tool.habitat.substrate]`."
    )


def load_runner_config(
    root: Path | None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> RunnerConfig:
    section = load_pyproject(root)
    table = section.get("substrate", {})
    if not isinstance(table, dict):
        raise ConfigError("[tool.habitat.substrate] must be a table")
    substrate = load_section(
        SubstrateConfig,
        table,
        where="[tool.habitat.substrate]",
        env_prefix="HABITAT_SUBSTRATE_",
        # Not the environment: HABITAT_SUBSTRATE_PORTS is what a substrate *gives* a test, and
        # a habitat run inside one (our own suite) must not read it back as configuration.
        environ={},
    )
    own: dict[str, Any] = {
        k: section[k] for k in ("coalesce_seconds", "idle_seconds") if k in section
    }
    config = load_section(
        RunnerConfig,
        own,
        where="[tool.habitat]",
        env_prefix="HABITAT_",
        environ=environ,
        overrides=overrides,
    )
    return config.model_copy(update={"substrate": substrate})
