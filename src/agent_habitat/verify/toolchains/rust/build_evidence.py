"""What a failed `cargo test` build already says of the crates' own code: the errors of their
libraries' and binaries' plain units (built for use, not as tests), when cargo's output
tells them apart from the test units' (lib_check.py compares them with HEAD's check).

A crate's library is built twice by `cargo test`: plainly (what its integration and doc
tests link) and as its unit-test harness (`cfg(test)`), and the compiler's messages carry
the target, not the unit. cargo names each unit that failed ("could not compile `lc`
(lib)", "… (lib test)", "… (bin "tool")", "… (bin "tool" test)") and each plain unit that
built (a `compiler-artifact` with `profile.test` false). So a plain unit's errors are known
when:

* it failed and its test unit did not (every error of the target is the plain unit's);
* both failed: an error said twice, word for word (the compiler says a diagnostic once
  per run, so the two are one per unit), is the plain unit's; one said once may be either's,
  and leaves the plain unit's errors unknown.

A plain unit that built has none. A binary of a crate whose library failed is never built
(here as in `cargo check`). Any other unit — not built, or a crate whose `cargo test` may
turn on features of its own that `cargo check --lib` leaves off (a dev-dependency by path:
itself, or a crate that depends on it) — leaves the answer incomplete. An error that may
come from code generation, which a check never does (constant evaluation, E0080; an error
without a place, as a linker's), is never taken: the plain unit's errors are then unknown.
Only a build that ended (`build-finished`) is read."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...models import Diagnostic
from .messages import compiler_messages
from .metadata import CrateGraph

__all__ = ["PlainBuilds", "PlainErrors", "plain_errors"]

_FAILED = re.compile(r"^error: could not compile `(?P<crate>[^`\s]+)[^`]*` \((?P<unit>[^)]*)\)")
_LIBRARIES = frozenset({"lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"})
_CODEGEN = frozenset({"E0080"})
"""Error codes a build may report that a check of the same code does not."""
_BUILD_ENDED = '"reason":"build-finished"'

Unit = tuple[str, str]
"""(crate, target): `lib`, or `bin NAME`."""


@dataclass
class PlainErrors:
    """The plain units' errors the output tells (`errors`), and whether they are all of
    the crates' own code's (`complete`: every library and binary unit accounted for)."""

    errors: list[Diagnostic]
    complete: bool


def _target(item: dict[str, Any]) -> str | None:
    target = item.get("target") or {}
    kinds = set(target.get("kind") or [])
    if kinds & _LIBRARIES:
        return "lib"
    if "bin" in kinds:
        return f"bin {target.get('name')}"
    return None


_OTHER = re.compile(r'(test|example|bench) "[^"]+"|build script(?: \(run\))?')


def _unit_of(words: str) -> tuple[str, bool] | None:
    """cargo's unit description (`lib test`, `bin "tool"`) → (target, a test unit); an
    integration test's, an example's, a bench's or a build script's → ("", …); None for
    one this module does not know."""
    test = words.endswith(" test")
    words = words.removesuffix(" test")
    if words == "lib":
        return "lib", test
    if (m := re.fullmatch(r'bin "(?P<name>[^"]+)"', words)) is not None:
        return f"bin {m['name']}", test
    return ("", test) if _OTHER.fullmatch(words) else None


def _units(graph: CrateGraph, crates: Iterable[str]) -> set[Unit]:
    out: set[Unit] = set()
    for name in crates:
        crate = graph.crates[name]
        if "--lib" in crate.unit_tests:
            out.add((name, "lib"))
        out.update((name, f"bin {b}") for b in crate.bin_targets)
    return out


@dataclass
class _Read:
    """What the output said of each unit of interest."""

    wanted: set[Unit]
    said: dict[Unit, Counter[str]] = field(default_factory=dict)
    """A unit's errors, each message (the whole JSON object) → how many times said."""
    lines: dict[str, str] = field(default_factory=dict)
    failed: set[tuple[Unit, bool]] = field(default_factory=set)
    """(unit, a test unit) cargo said could not compile."""
    built: set[Unit] = field(default_factory=set)
    unsure: set[Unit] = field(default_factory=set)
    """Units with an error a check may not report (`_CODEGEN`, no place)."""
    odd: set[str] = field(default_factory=set)
    """Crates with a failed unit this module cannot name: none of theirs is taken."""

    def failure(self, crate: str, words: str) -> None:
        unit = _unit_of(words)
        if unit is None:
            self.odd.add(crate)
        else:
            self.failed.add(((crate, unit[0]), unit[1]))

    def item(self, line: str, item: dict[str, Any], unit: Unit) -> None:
        if item.get("reason") == "compiler-artifact":
            if not (item.get("profile") or {}).get("test"):
                self.built.add(unit)
            return
        message = item.get("message") or {}
        if item.get("reason") != "compiler-message" or message.get("level") != "error":
            return
        code = str((message.get("code") or {}).get("code") or "")
        if code in _CODEGEN or not message.get("spans"):
            self.unsure.add(unit)
        key = json.dumps(message, sort_keys=True)
        self.said.setdefault(unit, Counter())[key] += 1
        self.lines.setdefault(key, line)

    def taken(self, graph: CrateGraph) -> tuple[list[str], bool]:
        """The messages known to be the plain units', and whether that is all of them."""
        taken: list[str] = []
        complete = True
        for unit in sorted(self.wanted):
            crate, target = unit
            said = self.said.get(unit, Counter())
            plain, test = (unit, False) in self.failed, (unit, True) in self.failed
            if graph.crates[crate].dev_paths or unit in self.unsure or crate in self.odd:
                complete = False
            elif plain and not test:
                taken += said
            elif plain:
                taken += [k for k, n in said.items() if n >= 2]
                complete = complete and all(n >= 2 for n in said.values())
            elif unit in self.built:
                continue
            elif target != "lib" and ((crate, "lib"), False) in self.failed:
                continue  # a binary is built after its crate's library, which failed
            else:
                complete = False
        return [self.lines[k] for k in taken], complete


def plain_errors(text: str, graph: CrateGraph, crates: Collection[str]) -> PlainErrors | None:
    """The errors of `crates`' plain library and binary units in `text` (a `cargo test
    --message-format=json` run's output, stdout and stderr together), as findings of `cargo
    check` (the tool HEAD's side names its own); None when the build did not end."""
    if _BUILD_ENDED not in text:
        return None
    by_dir = {c.dir: c.name for c in graph.crates.values()}
    read = _Read(wanted=_units(graph, crates))
    for line in text.splitlines():
        if (m := _FAILED.match(line)) is not None:
            read.failure(m["crate"], m["unit"])
            continue
        if not line.startswith('{"reason":'):
            continue
        try:
            item = json.loads(line)
        except ValueError:
            continue
        crate = by_dir.get(_crate_dir(item, graph.root) or "")
        target = _target(item)
        if crate is not None and target is not None and (crate, target) in read.wanted:
            read.item(line, item, (crate, target))
    lines, complete = read.taken(graph)
    found = compiler_messages("\n".join(lines), graph.root, tool="cargo check")
    return PlainErrors(errors=[d for d in found if d.severity == "error"], complete=complete)


def _crate_dir(item: dict[str, Any], root: Path) -> str | None:
    manifest = item.get("manifest_path")
    if not isinstance(manifest, str):
        return None
    try:
        rel = Path(manifest).parent.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None
    return rel or "."


class PlainBuilds:
    """Reads a `cargo test --message-format=json` run's lines as they come: `line` is True
    once every plain library and binary unit of `crates` has built (a `compiler-artifact`
    that is not a test's), so their code compiles on the tree."""

    def __init__(self, graph: CrateGraph, crates: Collection[str]) -> None:
        self.graph = graph
        self.left = _units(graph, crates)
        self.by_dir = {c.dir: c.name for c in graph.crates.values()}

    def line(self, line: bytes) -> bool:
        if b"compiler-artifact" in line:
            try:
                item = json.loads(line)
            except ValueError:
                return not self.left
            if isinstance(item, dict) and item.get("reason") == "compiler-artifact":
                crate = self.by_dir.get(_crate_dir(item, self.graph.root) or "")
                target = _target(item)
                built = not (item.get("profile") or {}).get("test")
                if crate is not None and target is not None and built:
                    self.left.discard((crate, target))
        return not self.left
