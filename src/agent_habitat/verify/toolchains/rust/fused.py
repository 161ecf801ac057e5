"""One compile for clippy and the tests: clippy-driver as rustc's workspace wrapper.

`cargo clippy` is `cargo check` with `RUSTC_WORKSPACE_WRAPPER=clippy-driver`: rustc's front
end plus clippy's lint passes, no code generated. `cargo test` then compiles the same crates
again, front end included, to run them. Set the same wrapper on `cargo test --no-run` and
clippy-driver does both in one pass: the lints `cargo clippy` gives (the workspace's crates
only, the project's `[lints]` and `clippy.toml` read the same way) and the test binaries.
`test.scoped` and `build.affected` run with the same wrapper, so cargo finds those units
fresh and only links, runs the doc tests and runs the binaries.

It is the same code only where the wrapper changes nothing but the lints, so it is not used:
- when clippy-driver is not installed, or the project or the environment already sets a
  workspace wrapper (`RUSTC_WORKSPACE_WRAPPER`, `build.rustc-workspace-wrapper`);
- when a source names `clippy` in a `cfg` (clippy-driver passes `--cfg clippy`: such code
  would be tested as clippy sees it, not as rustc builds it).
A clippy lint the project denies is an error of clippy-driver's build: a test run that hits
one runs again without the wrapper (`without_clippy`), so the tests never fail for a lint;
when diagnose.files' build already hit one, the rest of the climb builds without it
(`unfuse`), rather than fail the same way once more first."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio.to_thread

from ...models import Diagnostic
from ...rungs.context import RungContext

__all__ = ["WRAPPER", "clippy_errors", "fused_env", "unfuse", "without_clippy"]

WRAPPER = "RUSTC_WORKSPACE_WRAPPER"
_CFG = re.compile(r"\bcfg(?:_attr)?!?\s*\(([^;{}\]]*)")
_BARE_CLIPPY = re.compile(r"\bclippy\b(?!::)")
_SKIP_DIRS = frozenset({"target", ".git", "node_modules"})
_FUSED: dict[tuple[str, str], dict[str, str] | str] = {}
"""(ladder id, root) → the climb's answer: the same for every rung of one climb."""


def _names_cfg_clippy(root: Path) -> str | None:
    """The first `.rs` file (relative) whose `cfg`, `cfg!` or `cfg_attr` names `clippy`."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = Path(folder) / name
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if "clippy" in text and any(
                _BARE_CLIPPY.search(m[1]) for m in _CFG.finditer(text) if "clippy" in m[1]
            ):
                return path.relative_to(root).as_posix()
    return None


def _configured_wrapper(root: Path, env: Mapping[str, str]) -> str | None:
    """Where a workspace wrapper is already set: the environment or a cargo config."""
    if env.get(WRAPPER) or env.get("CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER"):
        return "the environment"
    home = Path(env.get("CARGO_HOME") or Path.home() / ".cargo")
    folders = [*(p / ".cargo" for p in (root, *root.parents)), home]
    for folder in folders:
        for name in ("config.toml", "config"):
            path = folder / name
            try:
                if "rustc-workspace-wrapper" in path.read_text(encoding="utf-8"):
                    return str(path)
            except (OSError, UnicodeDecodeError):
                continue
    return None


def _decide(root: Path, env: Mapping[str, str]) -> dict[str, str] | str:
    driver = shutil.which("clippy-driver", path=env.get("PATH"))
    if driver is None or shutil.which("cargo-clippy", path=env.get("PATH")) is None:
        return "clippy is not installed"
    where = _configured_wrapper(root, env)
    if where is not None:
        return f"a rustc workspace wrapper is already set ({where})"
    named = _names_cfg_clippy(root)
    if named is not None:
        return f"{named} names clippy in a cfg: its tests are built without clippy-driver"
    return {WRAPPER: driver}


async def fused_env(ctx: RungContext) -> dict[str, str] | str:
    """The environment that makes cargo's compile clippy's too, or why this climb does not
    use it. Asked once per climb."""
    key = (ctx.ladder_id, str(ctx.root))
    if key not in _FUSED:
        answer = await anyio.to_thread.run_sync(_decide, ctx.root, ctx.process_env())
        while len(_FUSED) >= 16:
            del _FUSED[next(iter(_FUSED))]
        _FUSED[key] = answer
    return _FUSED[key]


def unfuse(ctx: RungContext, why: str) -> None:
    """The rest of this climb builds as rustc builds (`why`): diagnose.files' fused build
    stopped at lints the project denies (`#![cfg_attr(test, deny(warnings))]`), which the
    tests' build would stop at again before building them plainly."""
    _FUSED[(ctx.ladder_id, str(ctx.root))] = why


def clippy_errors(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """The errors that are clippy's lints (denied by the project), not rustc's."""
    return [
        d for d in diagnostics if d.severity == "error" and (d.code or "").startswith("clippy::")
    ]


def without_clippy(denied: Sequence[Diagnostic]) -> str:
    """The note of a run made again without the wrapper."""
    first = denied[0]
    return (
        f"clippy-driver's build stopped at {len(denied)} clippy lint(s) the project denies "
        f"(first {first.code} at {first.file}:{first.line}; diagnose.files judges lints): "
        "built again without it, as rustc builds"
    )
