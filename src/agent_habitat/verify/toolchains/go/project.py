"""A Go project's packages: the package graph from `go list -e -test -json ./...`, and what a
change affects — the touched packages, the packages that import them (however
indirectly) and the test packages to run."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from .detect import MODULE_FILES
from .parse import json_objects

__all__ = ["LIST_FIELDS", "Affected", "Package", "affected", "dirs_of", "parse_list"]

LIST_FIELDS = (
    "ImportPath,Dir,ForTest,Deps,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,"
    "EmbedFiles,TestEmbedFiles,Standard"
)


@dataclass(frozen=True)
class Package:
    """One package of the project as `go list -test` lists it (test variants folded in)."""

    import_path: str
    dir: str
    """Relative to the root (`.` for the root package)."""
    deps: frozenset[str]
    """Every package it imports, however indirectly, its tests' imports included."""
    files: frozenset[str]
    """Its files (sources, tests, embedded), relative to the root."""
    has_tests: bool


def _base(entry: dict[str, Any]) -> str:
    # `p [p.test]` (p with its tests) and `p_test [p.test]` (its external tests) are p's.
    if entry.get("ForTest"):
        return str(entry["ForTest"])
    return str(entry.get("ImportPath", "")).split(" ", 1)[0]


def parse_list(text: str, root: Path) -> dict[str, Package]:
    """`go list -e -test -json=…` output (concatenated JSON objects) as the project's
    packages by import path; test main packages (`p.test`) and the standard library are
    left out."""
    merged: dict[str, dict[str, Any]] = {}
    for entry in json_objects(text):
        if not isinstance(entry, dict):
            continue
        path = str(entry.get("ImportPath", ""))
        if entry.get("Standard") or not entry.get("Dir") or path.endswith(".test"):
            continue
        base = _base(entry)
        slot = merged.setdefault(
            base, {"dir": entry["Dir"], "deps": set(), "files": set(), "tests": False}
        )
        slot["deps"].update(d.split(" ", 1)[0] for d in entry.get("Deps") or ())
        folder = Path(entry["Dir"])
        for key in (
            "GoFiles",
            "CgoFiles",
            "TestGoFiles",
            "XTestGoFiles",
            "EmbedFiles",
            "TestEmbedFiles",
        ):
            slot["files"].update(_rel(folder / name, root) for name in entry.get(key) or ())
        slot["tests"] = slot["tests"] or bool(entry.get("TestGoFiles") or entry.get("XTestGoFiles"))
    return {
        name: Package(
            import_path=name,
            dir=_rel(Path(s["dir"]), root),
            deps=frozenset(d for d in s["deps"] if d != name),
            files=frozenset(s["files"]),
            has_tests=s["tests"],
        )
        for name, s in merged.items()
    }


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix() or "."
    except ValueError:
        return path.as_posix()


@dataclass
class Affected:
    """What a change reaches."""

    full: bool = False
    """The whole module: go.mod/go.sum/go.work or vendor/ changed, or a Go file outside any
    listed package (see `reasons`)."""
    touched: list[str] = field(default_factory=list)
    """Import paths of the packages the change touched."""
    importers: list[str] = field(default_factory=list)
    """Import paths of the packages that import a touched one (not touched themselves)."""
    tests: list[str] = field(default_factory=list)
    """Import paths of the packages whose tests run: touched or importing, with test files."""
    reasons: list[str] = field(default_factory=list)

    @property
    def packages(self) -> list[str]:
        return sorted({*self.touched, *self.importers})


def _owner(rel: str, by_dir: dict[str, Package], by_file: dict[str, Package]) -> Package | None:
    if rel in by_file:
        return by_file[rel]
    path = PurePosixPath(rel)
    if path.suffix == ".go":
        return by_dir.get(path.parent.as_posix() or ".")
    if "testdata" in path.parts:  # the package whose folder holds the testdata
        parts = path.parts
        return by_dir.get(PurePosixPath(*parts[: parts.index("testdata")]).as_posix() or ".")
    return None


_NO_TESTS = " (no test files)"


def affected(packages: dict[str, Package], touched: Sequence[str]) -> Affected:
    """The packages a change of `touched` (relative paths, deleted ones too) reaches."""
    out = Affected()
    by_dir = {p.dir: p for p in packages.values()}
    by_file = {f: p for p in packages.values() for f in p.files}
    hit: set[str] = set()
    for rel in touched:
        name = PurePosixPath(rel).name
        if name in MODULE_FILES or rel.startswith("vendor/"):
            out.full = True
            out.reasons.append(f"{rel} changes every package's dependencies")
            continue
        owner = _owner(rel, by_dir, by_file)
        if owner is not None:
            hit.add(owner.import_path)
        elif rel.endswith(".go"):
            # A package go list did not list (a folder deleted, or one that does not load):
            # what imported it is unknown here, so everything is checked.
            out.full = True
            out.reasons.append(f"{rel} is in no package go list knows")
    out.touched = sorted(hit)
    out.importers = sorted(
        p.import_path for p in packages.values() if p.deps & hit and p.import_path not in hit
    )
    if out.full:
        out.tests = sorted(p.import_path for p in packages.values() if p.has_tests)
        return out
    out.tests = sorted(n for n in {*out.touched, *out.importers} if packages[n].has_tests)
    # A package without tests is affected (built) but runs no test: said so, as the reasons
    # read under "1 test path(s)" too (levenshtein's fuzz/ read as a second one).
    for name in out.touched:
        out.reasons.append(f"{name} is touched{_NO_TESTS * (not packages[name].has_tests)}")
    for name in out.importers:
        via = sorted(packages[name].deps & hit)
        no_tests = _NO_TESTS * (not packages[name].has_tests)
        out.reasons.append(f"{name} imports {', '.join(via)}{no_tests}")
    return out


def dirs_of(packages: dict[str, Package], names: Iterable[str]) -> list[str]:
    """`./dir` patterns for the named packages (go's relative package paths)."""
    return sorted(
        "./" + packages[n].dir if packages[n].dir != "." else "." for n in names if n in packages
    )
