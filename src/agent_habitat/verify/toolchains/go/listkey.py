"""When `go list` would say again what it said: the package graph kept across climbs.

`go list -e -test -json ./...` (a fraction of a second to seconds, every climb) answers from
what decides a package graph: the files there are (names pick GOOS/GOARCH and `_test`),
each Go file's package clause, build constraints and imports — all in the header before its
first declaration —, its `//go:embed` lines, the module files, go itself and its
environment. A climb's snapshot is HEAD plus the touched paths, so the graph of an earlier
climb still holds when HEAD is the same and every touched path's answer is the same: the
same paths exist, each Go file has the same header and embed lines, each module file the
same content. A touched Go file whose header and embed lines are HEAD's (a body edit) and a
touched file of another kind that HEAD has too add nothing to the key, so body edits in any
file keep HEAD's graph. Anything else — a new or deleted file, an import, a build tag,
another HEAD — lists again. Without git (no HEAD to stand on) every climb lists."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from ....git_env import git_env
from ...snapshot import Snapshot
from .detect import MODULE_FILES

__all__ = ["at_head", "list_key"]

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
        return _answer(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return b"<unreadable>"


def _answer(text: str) -> bytes:
    lines = text.splitlines()
    end = next((i for i, line in enumerate(lines) if _DECL.match(line)), len(lines))
    embeds = [line.strip() for line in lines[end:] if line.lstrip().startswith("//go:embed")]
    return "\n".join([*lines[:end], "\0", *embeds]).encode()


_HEAD: OrderedDict[tuple[str, str, str], bytes | None] = OrderedDict()
"""(root, HEAD commit, path) → the path's content at that commit (None: not there). A
commit's content never changes: list_key and comments.py ask for the same touched files in
one climb and the next, and git answers once."""


def at_head(root: Path, head: str, paths: list[str]) -> dict[str, bytes] | None:
    """HEAD's content of `paths` that HEAD has (one `git cat-file --batch` for those not
    asked before), or None when git cannot say. Blocks: call from a thread."""
    wanted = [p for p in paths if (str(root), head, p) not in _HEAD]
    if wanted:
        found = _cat_file(root, head, wanted)
        if found is None:
            return None
        for path in wanted:
            _HEAD[(str(root), head, path)] = found.get(path)
        while len(_HEAD) > 512:
            _HEAD.popitem(last=False)
    out: dict[str, bytes] = {}
    for path in paths:
        if (content := _HEAD.get((str(root), head, path))) is not None:
            out[path] = content
    return out


def _cat_file(root: Path, head: str, paths: list[str]) -> dict[str, bytes] | None:
    query = "".join(f"{head}:{p}\n" for p in paths).encode()
    try:
        done = subprocess.run(
            ["git", "cat-file", "--batch"],
            env=git_env(),
            cwd=root,
            input=query,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    out: dict[str, bytes] = {}
    data, pos = done.stdout, 0
    for path in paths:
        end = data.find(b"\n", pos)
        if end < 0:
            return None
        header = data[pos:end].split()
        pos = end + 1
        if header[-1:] == [b"missing"]:
            continue
        size = int(header[2])
        out[path] = data[pos : pos + size]
        pos += size + 1
    return out


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
    present = [rel for rel, content in sorted(snapshot.hashes.items()) if content != "-"]
    head = at_head(root, snapshot.head, present)
    if head is None:
        return None
    for rel, content in sorted(snapshot.hashes.items()):
        path = PurePosixPath(rel)
        if content == "-":
            part = b"<deleted>"
        elif path.name in MODULE_FILES:
            part = content.encode()
        elif path.suffix == ".go":
            part = _go_file_answer(root / rel)
            if rel in head and _answer(head[rel].decode("utf-8", "replace")) == part:
                continue  # a body edit: go list reads what HEAD has
        elif rel in head:
            continue  # still there, as at HEAD
        else:
            part = b"<new>"
        digest.update(f"{rel}\0".encode() + part + b"\0")
    return digest.hexdigest()
