"""When `go list` would say again what it said: the package graph kept across climbs.

`go list -e -test -json ./...` (a fraction of a second to seconds, every climb) answers from
what decides a package graph: the files there are (names pick GOOS/GOARCH and `_test`),
each Go file's package clause, build constraints and imports — all in the header before its
first declaration —, its `//go:embed` lines, the module files, go itself and its
environment. A climb's snapshot is HEAD plus the touched paths, so the graph of an earlier
climb still holds when HEAD is the same and every touched path's answer is the same: the
same paths exist, each Go file has the same header and embed lines, each module file the
same content. Anything else — a new file, an import, a build tag, another HEAD — lists
again. Without git (no HEAD to stand on) every climb lists."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from ...snapshot import Snapshot
from .detect import MODULE_FILES

__all__ = ["list_key"]

_DECL = re.compile(r"^(?:func|type|var|const)\b")
_GO_ENV = (
    "GOFLAGS",
    "GOOS",
    "GOARCH",
    "CGO_ENABLED",
    "GOEXPERIMENT",
    "GOWORK",
    "GO111MODULE",
    "GOPATH",
    "GOROOT",
    "GOTOOLCHAIN",
)


def _go_file_answer(path: Path) -> bytes:
    """A Go file's header (everything before its first top-level declaration) and its
    `//go:embed` lines: what go list reads of it."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return b"<unreadable>"
    lines = text.splitlines()
    end = next((i for i, line in enumerate(lines) if _DECL.match(line)), len(lines))
    embeds = [line.strip() for line in lines[end:] if line.lstrip().startswith("//go:embed")]
    return "\n".join([*lines[:end], "\0", *embeds]).encode()


def list_key(root: Path, snapshot: Snapshot, go: str, env: Mapping[str, str]) -> str | None:
    """The key of what `go list` answers for this snapshot, or None when it cannot be told
    without listing (blocking: reads the touched Go files' headers)."""
    if not snapshot.in_git or snapshot.head is None:
        return None
    digest = hashlib.sha256()
    try:
        stat = os.stat(go)
    except OSError:
        return None
    digest.update(f"{os.path.realpath(go)}\0{stat.st_mtime_ns}\0{stat.st_size}\0".encode())
    for name in _GO_ENV:
        digest.update(f"{name}={env.get(name, '')}\0".encode())
    # go.work in a folder above the module changes what ./... is.
    above = [str(p / "go.work") for p in root.parents if (p / "go.work").is_file()]
    digest.update(("\0".join(above) + f"\0{snapshot.head}\0").encode())
    for rel, content in sorted(snapshot.hashes.items()):
        digest.update(f"{rel}\0".encode())
        path = PurePosixPath(rel)
        if content == "-":
            digest.update(b"<deleted>\0")
        elif path.name in MODULE_FILES:
            digest.update(f"{content}\0".encode())
        elif path.suffix == ".go":
            digest.update(_go_file_answer(root / rel) + b"\0")
        else:
            digest.update(b"<exists>\0")
    return digest.hexdigest()
