"""What a TypeScript/JavaScript project is made of: its package manager (by lockfile), its
workspaces, the linter and test runner it configures, and the binaries in its own
`node_modules/.bin` (never a global one)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from ...output_dirs import NODE_OUTPUT

__all__ = [
    "CONFIG_FILES",
    "IGNORES",
    "SOURCE_SUFFIXES",
    "Linter",
    "NodeProject",
    "Runner",
    "Workspace",
    "find_bin",
    "install_command",
    "is_node_project",
    "load_project",
    "owns",
    "package_manager",
]

Linter = Literal["eslint", "biome"]
Runner = Literal["vitest", "jest", "node"]

SOURCE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
# Files whose change can change what the linter, tsc or a test runner says.
CONFIG_FILES = frozenset(
    {
        "package.json",
        "tsconfig.json",
        "jsconfig.json",
        "package-lock.json",
        "pnpm-lock.yaml",
        "pnpm-workspace.yaml",
        "yarn.lock",
        "biome.json",
        "biome.jsonc",
        ".eslintrc",
        ".eslintrc.json",
        ".eslintrc.js",
        ".eslintrc.cjs",
        ".eslintrc.yml",
        ".eslintrc.yaml",
    }
)
_CONFIG_STEMS = ("eslint.config.", "vitest.config.", "vite.config.", "jest.config.", "tsconfig.")
IGNORES = NODE_OUTPUT
"""Folder names (at any depth) the toolchain's tools fill: never part of a change."""
_IGNORED_DIRS = frozenset(IGNORES)
_ESLINT_CONFIGS = (
    *(f"eslint.config.{ext}" for ext in ("js", "mjs", "cjs", "ts", "mts", "cts")),
    *(f".eslintrc{ext}" for ext in ("", ".json", ".js", ".cjs", ".yml", ".yaml")),
)
_BIOME_CONFIGS = ("biome.json", "biome.jsonc")
_LOCKFILES: tuple[tuple[str, str], ...] = (
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("bun.lockb", "bun"),
    ("bun.lock", "bun"),
    ("package-lock.json", "npm"),
)


def is_node_project(root: Path) -> bool:
    return (root / "package.json").is_file()


def owns(rel: str) -> bool:
    """A touched path is the Node toolchain's: a JS/TS source or a file that configures it,
    outside the folders it ignores (`node_modules/`, build outputs)."""
    path = PurePosixPath(rel)
    if any(part in _IGNORED_DIRS for part in path.parts[:-1]):
        return False
    name = path.name
    return (
        name.endswith(SOURCE_SUFFIXES)
        or name in CONFIG_FILES
        or (name.startswith(_CONFIG_STEMS) and name.endswith((*SOURCE_SUFFIXES, ".json")))
    )


def package_manager(root: Path) -> str:
    """`npm`, `pnpm`, `yarn` or `bun`, by lockfile (then `packageManager`); npm by default."""
    for lockfile, manager in _LOCKFILES:
        if (root / lockfile).is_file():
            return manager
    declared = str(_read_json(root / "package.json").get("packageManager", ""))
    name = declared.partition("@")[0]
    return name if name in ("npm", "pnpm", "yarn", "bun") else "npm"


def install_command(root: Path) -> str:
    manager = package_manager(root)
    if manager == "npm":
        return "npm ci" if (root / "package-lock.json").is_file() else "npm install"
    return f"{manager} install"


def find_bin(root: Path, directory: Path, name: str) -> Path | None:
    """`name` from `node_modules/.bin` of `directory` or a folder above it up to `root` (a
    workspace's hoisted dependencies), never from PATH."""
    here = directory.resolve()
    top = root.resolve()
    while True:
        candidate = here / "node_modules" / ".bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
        if here == top or here.parent == here:
            return None
        here = here.parent


def _read_json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _strs(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _dict(value: object) -> Mapping[str, object]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Workspace:
    """One package of the project (the root itself for a single-package project)."""

    rel: str
    """Folder relative to the project root, `""` for the root."""
    path: Path
    name: str
    scripts: Mapping[str, str]
    dependencies: frozenset[str]
    """Every dependency name it declares (dependencies, dev, peer, optional)."""
    has_jest_key: bool = False

    def contains(self, rel: str) -> bool:
        return not self.rel or rel == self.rel or rel.startswith(self.rel + "/")

    def runner(self) -> Runner | None:
        """The test runner it uses: vitest, jest, the node test runner, or none."""
        files = {p.name for p in self.path.iterdir()} if self.path.is_dir() else set()
        test = self.scripts.get("test", "")
        if "vitest" in self.dependencies or "vitest" in test or _stem_in("vitest.config.", files):
            return "vitest"
        if (
            "jest" in self.dependencies
            or self.has_jest_key
            or "jest" in test
            or _stem_in("jest.config.", files)
        ):
            return "jest"
        if "node --test" in test or "node:test" in test:
            return "node"
        return None


def _stem_in(stem: str, names: Iterable[str]) -> bool:
    return any(n.startswith(stem) for n in names)


def _workspace(root: Path, rel: str) -> Workspace:
    path = root / rel if rel else root
    data = _read_json(path / "package.json")
    deps: set[str] = set()
    for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        deps.update(_dict(data.get(key)))
    scripts = {k: v for k, v in _dict(data.get("scripts")).items() if isinstance(v, str)}
    return Workspace(
        rel=rel,
        path=path,
        name=str(data.get("name") or rel or root.name),
        scripts=scripts,
        dependencies=frozenset(deps),
        has_jest_key="jest" in data,
    )


def _pnpm_patterns(root: Path) -> list[str]:
    # pnpm-workspace.yaml's `packages:` list, read without a YAML parser (a list of globs).
    try:
        lines = (root / "pnpm-workspace.yaml").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out: list[str] = []
    inside = False
    for line in lines:
        stripped = line.strip()
        if not line.startswith((" ", "\t", "-")):
            inside = stripped.startswith("packages:")
            continue
        if inside and stripped.startswith("-"):
            out.append(stripped[1:].strip().strip("'\""))
    return out


def _patterns(root: Path) -> list[str]:
    declared = _read_json(root / "package.json").get("workspaces")
    patterns = _strs(declared) or _strs(_dict(declared).get("packages"))
    return patterns or _pnpm_patterns(root)


@dataclass(frozen=True)
class NodeProject:
    root: Path
    manager: str
    workspaces: tuple[Workspace, ...]
    """The root package first, then each workspace, deepest matches first in `owner`."""

    def owner(self, rel: str) -> Workspace:
        """The workspace a relative path belongs to (the deepest folder that contains it)."""
        best = self.workspaces[0]
        for ws in self.workspaces[1:]:
            if ws.contains(rel) and len(ws.rel) > len(best.rel):
                best = ws
        return best

    def affected(self, touched: Iterable[str]) -> list[Workspace]:
        """The workspaces the touched files are in, and those that depend on them by name."""
        hit = {self.owner(rel).rel: self.owner(rel) for rel in touched}
        names = {ws.name for ws in hit.values()}
        grew = True
        while grew:
            grew = False
            for ws in self.workspaces:
                if ws.rel not in hit and ws.dependencies & names:
                    hit[ws.rel] = ws
                    names.add(ws.name)
                    grew = True
        return [ws for ws in self.workspaces if ws.rel in hit]

    def bin(self, workspace: Workspace, name: str) -> Path | None:
        return find_bin(self.root, workspace.path, name)

    def install_hint(self) -> str:
        return f"run `{install_command(self.root)}` in {self.root}"

    def linter(self, workspace: Workspace) -> tuple[Linter, Path] | None:
        """eslint or biome, whichever the workspace (or the root above it) configures, and
        the folder whose configuration it is (where the linter runs)."""
        for folder in dict.fromkeys((workspace.path, self.root)):
            if any((folder / name).is_file() for name in _ESLINT_CONFIGS):
                return "eslint", folder
            if any((folder / name).is_file() for name in _BIOME_CONFIGS):
                return "biome", folder
            if "eslintConfig" in _read_json(folder / "package.json"):
                return "eslint", folder
        return None


def load_project(root: Path) -> NodeProject:
    """The project's packages: the root, and each folder its workspace globs match that holds
    a `package.json` (`packages/*`, `apps/**`)."""
    found: dict[str, Workspace] = {"": _workspace(root, "")}
    for pattern in _patterns(root):
        if pattern.startswith("!"):
            continue
        for folder in sorted(root.glob(pattern.rstrip("/"))):
            rel = folder.relative_to(root).as_posix()
            if (
                folder.is_dir()
                and (folder / "package.json").is_file()
                and not _IGNORED_DIRS & set(PurePosixPath(rel).parts)
            ):
                found.setdefault(rel, _workspace(root, rel))
    return NodeProject(root=root, manager=package_manager(root), workspaces=tuple(found.values()))
