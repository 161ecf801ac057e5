"""A tiny project's `node_modules` with typescript alone (the cached one), for the
tsc tests: the cached tools' link also brings their 15 `@types` packages, which every
program that reads `@types` (a tsconfig without `types`: a solution's own, `{"strict":
false}`, a typical project's) reads, and checks without skipLibCheck: 3-10x the CPU of a
check of the tiny project's own files."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["typescript_only"]


def typescript_only(root: Path, types: dict[str, str] | None = None) -> None:
    """Replace the link to the cached tools at `root/node_modules` by a folder with
    typescript and its `.bin/tsc`, and the `@types` packages `types` names (name → the text
    of its `index.d.ts`)."""
    cached = (root / "node_modules").resolve()
    (root / "node_modules").unlink()
    (root / "node_modules" / ".bin").mkdir(parents=True)
    (root / "node_modules" / "typescript").symlink_to(
        cached / "typescript", target_is_directory=True
    )
    (root / "node_modules" / ".bin" / "tsc").symlink_to("../typescript/bin/tsc")
    for name, text in (types or {}).items():
        folder = root / "node_modules" / "@types" / name
        folder.mkdir(parents=True)
        (folder / "package.json").write_text(
            json.dumps({"name": f"@types/{name}", "version": "1.0.0", "types": "index.d.ts"}),
            encoding="utf-8",
        )
        (folder / "index.d.ts").write_text(text, encoding="utf-8")
