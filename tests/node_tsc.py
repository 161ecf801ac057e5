"""What the warm tsc's tests share (tests/verify/test_node_tsc_warm.py,
test_node_tsc_compile.py, test_node_tsc_references.py; three modules so that `--dist
loadfile` gives them to three workers): the tiny project's tsconfig and sources, the project
itself, and one `compile.project` rung on it, a server's climb or a one-shot's.

Imported as `node_tsc`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_habitat.verify.models import RungResult
from agent_habitat.verify.toolchains.node.rungs import RUNNERS
from node_warm import rung_ctx, tiny_project

__all__ = ["SHAPE", "TSCONFIG", "TSCONFIG_OPTIONS", "USE", "compile_rung", "project"]

TSCONFIG_OPTIONS: dict[str, Any] = {
    "strict": True,
    "module": "esnext",
    "target": "es2022",
    "moduleResolution": "bundler",
    "skipLibCheck": True,
    # No @types and only the ES5 library: without `types`, tsc reads every @types package
    # the linked test tools brought (210 files, 3x the CPU of each cold tsc here); es2022's
    # library is 55 files, es5's 3, and each tsc and warm checker parses them (0.60 -> 0.40
    # CPU s a cold tsc). The sources here need no more than ES5's types. The edit to
    # `{"strict": False}` in test_node_tsc_warm.py drops `types`, so that path is still held
    # against tsc.
    "types": [],
    "lib": ["es5"],
}
TSCONFIG: dict[str, Any] = {"compilerOptions": TSCONFIG_OPTIONS, "include": ["src"]}
SHAPE = "export interface Shape {\n  kind: 'circle' | 'square';\n  size: number;\n}\n"
USE = (
    "import type { Shape } from './shape';\n"
    "export function area(s: Shape): number {\n"
    "  return s.kind === 'circle' ? Math.PI * s.size ** 2 : s.size * s.size;\n"
    "}\n"
)


def project(root: Path) -> Path:
    """The tiny project, committed: src/old.ts has HEAD's one error (TS2322)."""
    files = {
        "package.json": json.dumps({"name": "tiny", "private": True, "type": "module"}),
        ".gitignore": "node_modules/\n",
        "tsconfig.json": json.dumps(TSCONFIG),
        "src/shape.ts": SHAPE,
        "src/area.ts": USE,
        "src/old.ts": "export const n: number = 'x';\n",
    }
    return tiny_project(root, files)


async def compile_rung(root: Path, *, server: bool) -> RungResult:
    """`compile.project` on the tree as it is, in a server's climb or a one-shot's."""
    return await RUNNERS["compile.project"](rung_ctx(root, server=server))
