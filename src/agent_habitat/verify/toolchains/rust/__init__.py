# rust/: the Rust toolchain (Cargo projects and workspaces). detect.py which projects and
#   files are Rust's; metadata.py the crate graph (`cargo metadata`) and the crates a change
#   affects, includes.py which other crates read a touched file (`include_str!`, `#[path]`),
#   change.py both read once per climb (and HEAD's export started as a rung starts);
#   messages.py cargo's JSON messages and libtest's report as findings; cargo.py
#   the rungs' shared preamble and the comparison with HEAD; lib_check.py a compile error
#   judged first by the crates' own check on the tree and on HEAD, build_evidence.py the
#   tree's side as a failed tests' build already tells it; rungs.py the compiler
#   rungs (clippy and check in the habitat's own target folder, build);
#   test_code.py which changes stay inside `#[cfg(test)]` modules; tests.py the test rungs,
#   head_tests.py their failed tests run again on HEAD, head_ahead.py those asked while
#   the run goes on; runners.py their table;
#   warm.py the warm-up's step (HEAD's checks and test build, once trusted); spool_watch.py
#   what a cargo run's output says as it comes (work that starts on it); dep_units.py the
#   registry dependencies' units one target folder built, copied into another (HEAD's).
from __future__ import annotations

from ..base import LazyRunners, Toolchain
from .detect import IGNORES, detect, owns

__all__ = ["RUST"]

RUST = Toolchain(
    name="rust",
    detect=detect,
    owns=owns,
    runners=LazyRunners("agent_habitat.verify.toolchains.rust.runners", "RUNNERS"),
    ignores=IGNORES,
)
