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
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...rungs.compare import head_of
from ...rungs.context import RungContext
from .detect import NodeProject, Workspace

__all__ = ["transpiled_config"]

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
