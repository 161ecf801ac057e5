# rust/: the Rust toolchain (Cargo projects and workspaces). detect.py which projects and
#   files are Rust's; metadata.py the crate graph (`cargo metadata`) and the crates a change
#   affects; messages.py cargo's JSON messages and libtest's report as findings; cargo.py
#   the rungs' shared preamble and the comparison with HEAD; rungs.py the compiler rungs
#   (clippy, check, build); tests.py the test rungs.
from __future__ import annotations

from collections.abc import Awaitable, Callable

from ...models import RungName, RungResult
from ...rungs.context import RungContext
from .detect import IGNORES, detect, owns
from .rungs import build_affected, compile_project, diagnose_files
from .tests import full_suite, scoped_suite

__all__ = ["IGNORES", "RUNNERS", "detect", "owns"]

RUNNERS: dict[RungName, Callable[[RungContext], Awaitable[RungResult]]] = {
    "diagnose.files": diagnose_files,
    "compile.project": compile_project,
    "build.affected": build_affected,
    "test.scoped": scoped_suite,
    "test.full": full_suite,
}
