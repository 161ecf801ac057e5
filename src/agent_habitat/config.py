"""Configuration: `[tool.habitat]` in the project's pyproject.toml, then `HABITAT_*`
environment variables, then flags (the caller passes those as `overrides`).

Bad configuration fails at start with a `ConfigError` naming the key.
"""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ConfigError

__all__ = ["ShellConfig", "load_section", "load_shell_config"]

M = TypeVar("M", bound=BaseModel)


class ShellConfig(BaseModel):
    """`[tool.habitat.shell]` — caps and timings of shell tabs."""

    model_config = ConfigDict(extra="forbid")

    max_tabs: int = Field(default=8, ge=1, le=256)
    history_rows: int = Field(default=50, ge=1, le=10_000)
    output_cap_bytes: int = Field(default=16 * 1024, ge=256)
    preview_bytes: int = Field(default=2 * 1024, ge=64)
    kill_grace_seconds: float = Field(default=2.0, ge=0)
    long_run_nice: int = Field(default=5, ge=0, le=19)
    """The nice a run still going after half a second takes (its session's scheduling group
    too, where Linux has them), so loud tabs leave the host and its callers their turn; 5
    weighs it as systemd's background slice does. A long run that then writes its output
    flat out (over 4 MiB/s) takes nice 15 (`shell/long_runs.py`). 0: runs keep the host's
    priority, loud ones too."""
    journal_limit: int = Field(default=10_000, ge=100)
    spool_run_budget_bytes: int = Field(default=256 * 1024**2, ge=1024**2)
    """Disk one run's output may use: its head and a rolling tail (the middle is counted)."""
    spool_workspace_budget_bytes: int = Field(default=2 * 1024**3, ge=1024**2)
    """Disk all runs' output of a workspace may use; the oldest are cut down first."""


# Keys of `[tool.habitat]` itself; each table below it is validated by the part that owns it.
TOP_LEVEL_KEYS = frozenset(
    {
        "shell",
        "ladder",
        "policy",
        "coalesce_seconds",
        "idle_seconds",
        "substrate",
        "host",
        "generated",
    }
)


def load_pyproject(root: Path | None) -> dict[str, Any]:
    """`[tool.habitat]` of `root/pyproject.toml`, or {}; an unknown key fails naming it."""
    if root is None:
        return {}
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    with open(path, "rb") as f:
        raw = f.read()
    # `copy`: the caller's to change; the parsed file stays as read.
    return copy.deepcopy(_habitat_table(path, raw))


_READ: dict[Path, tuple[bytes, dict[str, Any]]] = {}
"""The last `[tool.habitat]` read from each pyproject.toml, with the bytes it was read from:
a host reads the file four times per verify (the shell's, the ladder's, the policy's and the
generators' settings), and parsing it cost 2-7 ms each on a loaded machine. The file is
still read every time; only the same bytes are not parsed again."""
_READ_KEPT = 32


def _habitat_table(path: Path, raw: bytes) -> dict[str, Any]:
    kept = _READ.get(path)
    if kept is not None and kept[0] == raw:
        return kept[1]
    try:
        data = tomllib.loads(raw.decode())  # as `tomllib.load` reads a binary file
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix the file") from exc
    section = data.get("tool", {}).get("habitat", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.habitat] must be a table")
    unknown = sorted(set(section) - TOP_LEVEL_KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key(s) in [tool.habitat]: {', '.join(unknown)}; "
            f"known: {', '.join(sorted(TOP_LEVEL_KEYS))}"
        )
    if len(_READ) >= _READ_KEPT:
        _READ.clear()  # a process reads one project's file or a few (tests: many)
    _READ[path] = (raw, section)
    return section


def _env_overrides(
    prefix: str, model: type[BaseModel], environ: Mapping[str, str]
) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in model.model_fields:
        key = f"{prefix}{name.upper()}"
        if key in environ:
            out[name] = environ[key]
    return out


def load_section(
    model: type[M],
    section: Mapping[str, Any],
    *,
    where: str,
    env_prefix: str,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> M:
    """Validate one config table, layered with env vars and overrides; errors name the key."""
    merged: dict[str, Any] = dict(section)
    from_env = _env_overrides(env_prefix, model, os.environ if environ is None else environ)
    merged.update(from_env)
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    merged.update(given)
    try:
        return model.model_validate(merged)
    except ValidationError as exc:

        def source(loc: tuple[int | str, ...]) -> str:
            # Name the value where it came from: the variable set, not the key it overrides.
            name = str(loc[0]) if loc else ""
            if name in from_env and name not in given:
                return f"{env_prefix}{name.upper()}={from_env[name]!r}"
            return f"{where}.{'.'.join(str(p) for p in loc)}"

        problems = "; ".join(f"{source(err['loc'])}: {err['msg']}" for err in exc.errors())
        raise ConfigError(f"bad configuration: {problems}") from exc


RUN_CGROUPS = "HABITAT_RUN_CGROUPS"
"""0 turns run cgroups off (`proc/cgroup.py`); 1 or unset: on where the machine has them."""
RUN_CGROUPS_VALUES = ("", "0", "1")


def _check_run_cgroups(environ: Mapping[str, str]) -> None:
    value = environ.get(RUN_CGROUPS)
    if value is not None and value not in RUN_CGROUPS_VALUES:
        raise ConfigError(
            f"bad configuration: {RUN_CGROUPS}={value!r}: must be 0 (run cgroups off) or 1 "
            "(on where the machine has them); unset it for the default"
        )


def load_shell_config(
    root: Path | None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> ShellConfig:
    _check_run_cgroups(os.environ if environ is None else environ)
    section = load_pyproject(root).get("shell", {})
    return load_section(
        ShellConfig,
        section,
        where="[tool.habitat.shell]",
        env_prefix="HABITAT_",
        environ=environ,
        overrides=overrides,
    )
