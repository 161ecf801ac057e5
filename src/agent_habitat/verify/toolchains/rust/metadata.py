"""The project's crates as `cargo metadata --format-version 1 --no-deps` describes them:
which crate a touched file belongs to, which crates depend on it through path
dependencies (its reverse dependencies, transitively), and which test targets it has."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = ["Affected", "Crate", "CrateGraph", "MetadataError", "parse_metadata"]

METADATA_ARGV = ("cargo", "metadata", "--format-version", "1", "--no-deps", "--offline")
"""Only the workspace's own crates: no registry resolution, so it never waits on the
network (`--offline`) and costs ~50 ms."""


class MetadataError(ValueError):
    """`cargo metadata` said something this module cannot read."""


@dataclass(frozen=True)
class Crate:
    name: str
    dir: str
    """The crate's folder relative to the project root (`.` for the root crate)."""
    path_deps: frozenset[str]
    """Names of the workspace crates it depends on through `path =` (any kind)."""
    tests: frozenset[str]
    """Its integration test targets as `file=name` (the file relative to the project root)."""
    binaries: frozenset[str] = frozenset()
    """Its targets' names as the names of their binaries (`-` as `_`)."""
    unit_tests: tuple[str, ...] = ("--lib", "--bins")
    """cargo test's selection of its unit-test harnesses: `--lib` when it has a library,
    `--bins` when it has binaries."""
    bin_targets: tuple[str, ...] = ()
    """Its binary targets' names, as cargo names them."""
    dev_paths: bool = False
    """A dev-dependency by path (itself, another crate of the workspace, a folder): under
    `cargo test` it may turn on features of this crate that `cargo check --lib` leaves off."""

    def test_target_of(self, rel: str) -> str | None:
        """The integration test target whose root file is `rel`, if any."""
        for entry in self.tests:
            file, _, name = entry.partition("=")
            if file == rel:
                return name
        return None

    def test_targets(self) -> list[str]:
        return sorted(entry.partition("=")[2] for entry in self.tests)


@dataclass
class Affected:
    """Which crates a change reaches, and why."""

    crates: list[str] = field(default_factory=list)
    """Every crate whose code or tests the change can reach (touched and reverse deps)."""
    every: bool = False
    """The workspace manifest, lock file or cargo's config changed: every crate."""
    only_tests: dict[str, list[str]] = field(default_factory=dict)
    """Crates the change touches only through integration test files: crate → targets.
    Their other tests cannot see the change."""
    only_units: dict[str, list[str]] = field(default_factory=dict)
    """Crates the change touches only inside `#[cfg(test)]` modules of their sources
    (test_code.py): crate → those files. Their unit tests alone can see it, no other crate."""
    reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CrateGraph:
    root: Path
    crates: Mapping[str, Crate]
    build_dir: Path | None = None
    """Where cargo builds the project for its user (`cargo metadata`'s `build_directory`,
    else its `target_directory`): the user's own `target/` unless configured elsewhere."""

    def crate_of(self, rel: str) -> Crate | None:
        """The crate whose folder holds `rel` (the innermost one)."""
        best: Crate | None = None
        parts = PurePosixPath(rel).parts
        for crate in self.crates.values():
            prefix = () if crate.dir == "." else PurePosixPath(crate.dir).parts
            if parts[: len(prefix)] == prefix and (
                best is None or len(prefix) > len(PurePosixPath(best.dir).parts)
            ):
                best = crate
        return best

    def dir_of(self, binary: str) -> str | None:
        """The folder of the crate with a target of this binary name (a doc-tested crate's
        name too)."""
        wanted = binary.replace("-", "_")
        for crate in self.crates.values():
            if wanted in crate.binaries or wanted == crate.name.replace("-", "_"):
                return crate.dir
        return None

    def dependents(self, names: Iterable[str]) -> set[str]:
        """`names` and every workspace crate that depends on one of them, transitively."""
        out = set(names)
        grew = True
        while grew:
            grew = False
            for crate in self.crates.values():
                if crate.name not in out and crate.path_deps & out:
                    out.add(crate.name)
                    grew = True
        return out

    def affected(
        self,
        touched: Iterable[str],
        test_code: Collection[str] = (),
        readers: Mapping[str, Collection[str]] | None = None,
    ) -> Affected:
        """The crates `touched` reaches. A file under a crate's `tests/` reaches that crate's
        integration tests only (a test target's own file: that target alone); a file under
        its `src/` in `test_code` (changed only inside `#[cfg(test)]` modules) its unit
        tests only; any other file of a crate reaches the crate and its reverse
        dependencies; the lock file, cargo's config, a workspace manifest or a file outside
        every crate reaches all. `readers`: a touched file → the other crates that read it
        through a macro (includes.py), reached as if their own code changed."""
        result = Affected()
        code: set[str] = set()
        units: dict[str, list[str]] = {}
        test_only: dict[str, set[str]] = {}
        for rel in sorted(touched):
            crate = self.crate_of(rel)
            path = PurePosixPath(rel)
            workspace_manifest = (
                crate is not None
                and crate.dir == "."
                and path.name == "Cargo.toml"
                and len(self.crates) > 1
            )
            if (
                crate is None
                or workspace_manifest
                or path.name == "Cargo.lock"
                or (".cargo" in path.parts)
            ):
                result.every = True
                result.reasons.append(f"{rel} changed: every crate of the workspace")
                continue
            inner = path.parts[0 if crate.dir == "." else len(PurePosixPath(crate.dir).parts) :]
            if inner[:1] == ("tests",) and path.suffix == ".rs":
                target = crate.test_target_of(rel)
                targets = {target} if target is not None else set(crate.test_targets())
                test_only.setdefault(crate.name, set()).update(targets)
                shown = f"test target {target}" if target else "integration tests' shared code"
                result.reasons.append(f"{rel} is {crate.name}'s {shown}")
            elif inner[:1] == ("src",) and rel in test_code:
                units.setdefault(crate.name, []).append(rel)
                result.reasons.append(f"{rel} changed only in #[cfg(test)] modules")
            else:
                code.add(crate.name)
                result.reasons.append(f"{rel} is in crate {crate.name}")
            for name in sorted((readers or {}).get(rel, ())):
                if name in self.crates and name not in code:
                    code.add(name)
                    result.reasons.append(f"{name} reads {rel} (an include macro or #[path])")
        if result.every:
            result.crates = sorted(self.crates)
            return result
        reached = self.dependents(code)
        for name in sorted(reached - code):
            via = ", ".join(sorted(self.crates[name].path_deps & reached))
            result.reasons.append(f"{name} depends on {via}")
        result.crates = sorted(reached | set(test_only) | set(units))
        result.only_tests = {
            name: sorted(targets) for name, targets in test_only.items() if name not in reached
        }
        result.only_units = {name: files for name, files in units.items() if name not in reached}
        return result


def _rel(root: Path, path: str) -> str:
    try:
        rel = Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError as exc:
        raise MetadataError(f"{path} is outside the project {root}") from exc
    return rel or "."


_LIBRARIES = frozenset({"lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"})


def _unit_tests(targets: list[dict[str, Any]]) -> tuple[str, ...]:
    kinds = {k for t in targets for k in t.get("kind", [])}
    return (*(["--lib"] if kinds & _LIBRARIES else []), *(["--bins"] if "bin" in kinds else []))


def parse_metadata(text: str, root: Path) -> CrateGraph:
    """The workspace members of `cargo metadata` output; path dependencies only between them."""
    # cargo's warnings (an unused manifest key, a resolver it defaults) share the output:
    # the description is its one JSON line.
    line = next((ln for ln in text.splitlines() if ln.startswith("{")), text)
    try:
        data: dict[str, Any] = json.loads(line)
        members = set(data["workspace_members"])
        packages = [p for p in data["packages"] if p["id"] in members]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise MetadataError(f"cargo metadata output unreadable: {exc}") from exc
    dirs = {p["name"]: str(Path(p["manifest_path"]).parent) for p in packages}
    by_dir = {Path(d).resolve(): name for name, d in dirs.items()}
    crates: dict[str, Crate] = {}
    for package in packages:
        deps = {
            by_dir[Path(dep["path"]).resolve()]
            for dep in package.get("dependencies", [])
            if dep.get("path") and Path(dep["path"]).resolve() in by_dir
        }
        tests = {
            f"{_rel(root, t['src_path'])}={t['name']}"
            for t in package.get("targets", [])
            if "test" in t.get("kind", [])
        }
        name = package["name"]
        crates[name] = Crate(
            name=name,
            dir=_rel(root, dirs[name]),
            path_deps=frozenset(deps - {name}),
            tests=frozenset(tests),
            binaries=frozenset(
                str(t["name"]).replace("-", "_") for t in package.get("targets", [])
            ),
            unit_tests=_unit_tests(package.get("targets", [])),
            bin_targets=tuple(
                sorted(
                    str(t["name"]) for t in package.get("targets", []) if "bin" in t.get("kind", [])
                )
            ),
            dev_paths=any(
                dep.get("kind") == "dev" and dep.get("path")
                for dep in package.get("dependencies", [])
            ),
        )
    built = data.get("build_directory") or data.get("target_directory")
    return CrateGraph(
        root=root, crates=crates, build_dir=Path(built) if isinstance(built, str) else None
    )
