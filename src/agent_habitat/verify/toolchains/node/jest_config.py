"""Whether a workspace's `jest.config.ts` may be compiled without ts-node's type check.

jest reads a TypeScript configuration through ts-node, which type-checks it: 17 of the 27
CPU-seconds of ms 3.0.0's related run (`node --cpu-prof`), and the warm jest's start that
a first verify waits for (30-36 s at load 36). That check's answer depends on the file's
text, what it imports, the tsconfig that ts-node reads and the installed packages (the
warm jest is started again when those change). When the file and every tsconfig ts-node
could read are HEAD's own and the file imports no local module, its type errors, if any,
are HEAD's too: never the change's, so the verdict does not need them, and the warm jest's
start compiles it transpile-only (`TS_NODE_TRANSPILE_ONLY` for that load only, with
`TS_NODE_LOG_ERROR`: what transpiling still reports, the options' own diagnostics such as
ms 3.0.0's TS5069, is HEAD's too; jest_warm.cjs). A configuration that names its own
loader (`@jest-config-loader`), a tsconfig with a `ts-node` section or a local `extends`, a
configuration the change made or edited: type-checked, as the CLI does.

The same holds for HEAD's run of a red run's failed tests (head_tests.py), a cold CLI in
HEAD's export: when the tree's configuration may be compiled transpile-only, HEAD's is the
same file with the same tsconfigs and the same installed packages, so its type check would
answer as the tree's did, and `head_env` gives that run the same two variables (ms 3.0.0's
HEAD run of two test files: 11.6-25.8 s → 6.4-7.8 s at load 15-17).

A cold jest (the CLI: a one-shot verify, jest before 29, HEAD's run) gets the substrate's
fresh `TMPDIR`, and jest's cache folder defaults to one under it (`os.tmpdir()/jest_<uid>`):
each run started with no haste map and no transform cache. `cache_args` gives it a folder
that persists per workspace under the habitat's state instead, unless the project's own
configuration names one (the configuration wins). jest keys what it keeps there by content
and configuration (the haste map by root and configuration, each transform by the file's
content, path, configuration and transformer's own key), as it does in the folder the user's
own runs share, so an entry made for other code is never served (ms 3.0.0, two test files,
transpile-only: 7.1-14.8 s with a fresh folder, 5.4-8.0 s with the kept one, load 19).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...rungs.compare import head_of
from ...rungs.context import RungContext
from .detect import NodeProject, Workspace

__all__ = ["cache_args", "head_env", "transpiled_config"]

_TS = (".ts", ".mts", ".cts")
_LOCAL_IMPORT = re.compile(r"""(?:\bfrom|\brequire\s*\(|\bimport\s*\(|\bimport)\s*['"]\.""")
_LOCAL_EXTENDS = re.compile(r'"extends"\s*:\s*(?:\[[^\]]*)?"\.')


def _same_as_head(ctx: RungContext, path: Path) -> bool | None:
    """Whether the file is as at HEAD (both absent counts); None when HEAD is unknown."""
    head = head_of(ctx)
    if isinstance(head, str):
        return None
    try:
        now: bytes | None = path.read_bytes()
    except FileNotFoundError:
        now = None
    except OSError:
        return False
    rel = os.path.relpath(path, ctx.root)
    if rel.startswith(".."):
        return False
    return now == head.read(rel.replace(os.sep, "/"))


def transpiled_config(ctx: RungContext, project: NodeProject, ws: Workspace) -> str | None:
    """The workspace's TypeScript jest configuration's name when it may be compiled
    without a type check (see the module), else None."""
    configs = [p for p in sorted(ws.path.glob("jest.config.*")) if p.suffix in _TS]
    if len(configs) != 1:
        return None
    config = configs[0]
    try:
        text = config.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if _LOCAL_IMPORT.search(text) or "@jest-config-loader" in text:
        return None
    for tsconfig in dict.fromkeys((ws.path / "tsconfig.json", project.root / "tsconfig.json")):
        if tsconfig.is_file():
            try:
                raw = tsconfig.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
            if '"ts-node"' in raw or _LOCAL_EXTENDS.search(raw):
                return None
        if _same_as_head(ctx, tsconfig) is not True:
            return None
    return config.name if _same_as_head(ctx, config) is True else None


_TRANSPILE = ("TS_NODE_TRANSPILE_ONLY", "TS_NODE_LOG_ERROR")
_CACHE_KEY = "cacheDirectory"


def head_env(ctx: RungContext, project: NodeProject, ws: Workspace) -> dict[str, str]:
    """The variables for HEAD's jest run of the workspace: ts-node transpile-only when the
    tree's configuration may be compiled so (see the module); the user's own win."""
    if transpiled_config(ctx, project, ws) is None:
        return {}
    return {name: "true" for name in _TRANSPILE if name not in os.environ}


def _names_cache(folder: Path) -> bool:
    """Whether jest's configuration in `folder` may name its own cache folder (the key in a
    `jest.config.*` or `package.json`, or a configuration it cannot read)."""
    for path in [*sorted(folder.glob("jest.config.*")), folder / "package.json"]:
        try:
            if _CACHE_KEY in path.read_text(encoding="utf-8"):
                return True
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError):
            return True
    return False


def cache_args(ctx: RungContext, folder: Path) -> list[str]:
    """`--cacheDirectory` of the workspace's kept jest cache for a cold jest run in `folder`
    (see the module); none when the configuration there names its own (blocking)."""
    if _names_cache(folder):
        return []
    cache = ctx.workspace.state_dir / "jest-cache"
    cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    return [f"--cacheDirectory={cache}"]
