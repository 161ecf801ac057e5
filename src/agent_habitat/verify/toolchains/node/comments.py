"""Whether a change of JavaScript/TypeScript files is only comments that nothing reads: then
no type check and no test can come out differently, and `compile.project` and `test.scoped`
have nothing to do (the linter still answers in `diagnose.files`, and `test.full` runs the
suite as ever). Python (`select/same_code.same_code_as_head`) and Go (`toolchains/go/comments.py`)
skip the same; a comment in JS/TS is read by more tools, so more is asked here.

Comments-only means, for every touched file (comments.cjs decides the first two, with the
project's own typescript parsing HEAD's text and the tree's):
* the same code: both texts parse without an error to the same tree of tokens (the parser's:
  a regular expression or a template is one token, whatever it holds);
* each comment added, removed or changed is prose that no tool reads: no directive or pragma
  (`@ts-expect-error` and every `@` tag: JSDoc types a JavaScript file, `@jsx`,
  `@jest-environment`; `/// <reference`, `//# sourceMappingURL`, `/*!` licences, coverage
  ignores, eslint/prettier/biome switches, bundlers' `@__PURE__` and magic comments), and
  outside every function and class, whose source text, comments included, is what
  `Function.prototype.toString` gives a test or a library that reads it;
* nothing of the project reads the file as data: no other JS/TS file of the project outside
  node_modules names it but in an import (its name with its extension: `readFileSync(join(
  __dirname, 'index.ts'))`, a `?raw` import, a mock's path), the file does not name its own
  path (`__filename`, `import.meta.url`, `import.meta.filename`), and no file of the project
  lists folders (`readdir`, a glob), which may read any file;
* a JS/TS source HEAD has, outside node_modules; a change that touches anything else (a
  snapshot, a configuration, a new or deleted file) is not comments-only.

Not compared, as for Python and Go: line numbers. Code that moved down a line is the same
code, though a stack trace shows its new line. Without typescript in the project, or when
its parser could not be asked, nothing is comments-only.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from ...head import HeadTree
from ...models import RungResult
from ...rungs.context import RungContext
from .detect import SOURCE_SUFFIXES, NodeProject

__all__ = ["SCRIPT", "comments_only", "refused"]

SCRIPT = Path(__file__).with_name("comments.cjs")
_MARKS = ("//", "/*", "*/")
_SELF = re.compile(r"__filename|import\.meta\.(?:url|filename)")
# An import's, a require's or an export's specifier names a module to run, not a file to
# read; one with a query (`?raw`, `?url`) is data, so it stays.
_IMPORT = re.compile(r"""(?:\bfrom|\bimport|\brequire)\s*\(?\s*(['"])[^'"?]*\1""")
_LISTS = re.compile(r"readdir|opendir|\bglob|Glob\b|globby|fast-glob|tinyglobby|\bfg\(")
_decided: OrderedDict[tuple[str, str], tuple[bool, str] | None] = OrderedDict()
_locks: dict[str, anyio.Lock] = {}


def _comment_lines(old: str, new: str) -> bool:
    """Whether every changed line on either side looks like a comment's or is blank (a quick
    look before the parser is asked: most changes are code)."""
    a, b = old.splitlines(), new.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for line in (*a[i1:i2], *b[j1:j2]):
            bare = line.strip()
            if bare and not bare.startswith("*") and not any(m in bare for m in _MARKS):
                return False
    return True


def _changed(ctx: RungContext) -> dict[str, tuple[str, str]] | None:
    """HEAD's text and the tree's of each touched file, when each is a JS/TS source HEAD has
    and the change looks like comments only; else None (blocking)."""
    snapshot = ctx.snapshot
    if not snapshot.in_git or snapshot.head is None or not ctx.touched:
        return None
    deleted = set(snapshot.deleted)
    head = HeadTree(ctx.root, snapshot.head, ctx.workspace.state_dir)
    out: dict[str, tuple[str, str]] = {}
    for rel in ctx.touched:
        if not rel.endswith(SOURCE_SUFFIXES) or "node_modules" in rel.split("/"):
            return None
        if rel in deleted:
            return None
        data = head.read(rel)
        try:
            now = (ctx.root / rel).read_bytes().decode("utf-8")
            old = None if data is None else data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if old is None or not _comment_lines(old, now):
            return None
        if old != now:
            out[rel] = (old, now)
    return out or None


def _project_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "node_modules" and not d.startswith(".")]
        found += [Path(folder, f) for f in files if f.endswith(SOURCE_SUFFIXES)]
    return found


def _read_as_data(ctx: RungContext, changed: dict[str, tuple[str, str]]) -> str | None:
    """Why the project may read a touched file as data, or None (blocking)."""
    names = {rel: rel.rsplit("/", 1)[-1] for rel in changed}
    for rel, (_, now) in changed.items():
        if _SELF.search(now):
            return f"{rel} reads its own path (__filename or import.meta)"
    for path in _project_files(ctx.root):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        rel = path.relative_to(ctx.root).as_posix()
        text = _IMPORT.sub("", text)
        if (m := _LISTS.search(text)) is not None:
            return f"{rel} lists folders ({m[0]}), so it may read any file"
        for touched, name in names.items():
            if touched != rel and name in text:
                return f"{rel} names {name}"
    return None


def _typescript(project: NodeProject) -> Path | None:
    for ws in project.workspaces:
        tsc = project.bin(ws, "tsc")
        if tsc is not None:
            return tsc.resolve().parent.parent  # node_modules/typescript/bin/tsc
    return None


async def _parser(
    typescript: Path, changed: dict[str, tuple[str, str]], cwd: Path
) -> dict[str, Any] | str:
    """comments.cjs's answer for the files (HEAD's text, the tree's), or why there is none."""
    files = [{"path": rel, "head": old, "now": now} for rel, (old, now) in changed.items()]
    try:
        with anyio.fail_after(120):
            done = await anyio.run_process(
                ["node", str(SCRIPT), str(typescript)],
                input=json.dumps(files).encode(),
                cwd=cwd,
                check=False,
            )
        answer = json.loads(done.stdout.decode("utf-8", "replace") or "null")
    except (OSError, ValueError, TimeoutError) as exc:
        return f"typescript's parser could not be asked ({exc})"
    if not isinstance(answer, dict) or not isinstance(answer.get("same"), bool):
        tail = done.stderr.decode("utf-8", "replace").strip()[-200:]
        return f"typescript's parser gave no answer (exit {done.returncode}): {tail}"
    return answer


async def _ask(typescript: Path, changed: dict[str, tuple[str, str]], cwd: Path) -> str | None:
    """None when the files are the same code with prose comments, else why not."""
    answer = await _parser(typescript, changed, cwd)
    if isinstance(answer, str):
        return answer
    return None if answer["same"] else str(answer.get("why") or "not the same code")


async def comments_only(ctx: RungContext, project: NodeProject) -> tuple[bool, str] | None:
    """(True, why the rung has nothing to do) when the change is only comments nothing reads
    (see the module); (False, why it is not) when it looked like comments but is more; None
    for any other change. Asked once per snapshot (both rungs ask)."""
    key = (str(ctx.root), ctx.snapshot.id)
    async with _locks.setdefault(str(ctx.root), anyio.Lock()):
        if key not in _decided:
            _decided[key] = await _decide(ctx, project)
            while len(_decided) > 16:
                _decided.popitem(last=False)
    return _decided[key]


async def _decide(ctx: RungContext, project: NodeProject) -> tuple[bool, str] | None:
    changed = await anyio.to_thread.run_sync(_changed, ctx)
    if changed is None:
        return None
    typescript = _typescript(project)
    if typescript is None:
        return False, "the project has no typescript to parse it with"
    why = await _ask(typescript, changed, ctx.root)
    if why is None:
        why = await anyio.to_thread.run_sync(_read_as_data, ctx, changed)
    if why is not None:
        return False, why
    return True, (
        f"the change is only comments in {len(changed)} JavaScript/TypeScript file(s): the "
        "same code as HEAD (typescript's parser), each changed comment prose outside any "
        "function or class, no file of the project reading them: no type check or test can "
        "come out differently (the linter answers in diagnose.files)"
    )


def refused(result: RungResult, said: tuple[bool, str] | None) -> RungResult:
    """`result` with a note saying why a change that looked like comments ran the rung."""
    if said is not None and not said[0]:
        result.notes.append(f"node: the change looked like comments only, but {said[1]}")
    return result
