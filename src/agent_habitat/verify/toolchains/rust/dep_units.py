"""The registry dependencies one target folder compiled, copied into another that lacks them,
so cargo finds them fresh there instead of compiling them again.

HEAD's builds run in a target folder of their own (cargo.head_env), and so do the tree's
clippy and lib checks. Built from nothing there, a project's dependencies cost what the
user's first build cost: humantime's HEAD test build compiled time, chrono and rand for
70-90 s of a verdict whose `cargo test` took 8 s (issue 27), while the user's own `target/`
held every one of them, built with the same profile for the same lock file.

A unit is one compile (or one build script run) of one package: cargo names its folder in
`.fingerprint/` `<package>-<hash>`, and its files in `deps/` and `build/` carry the same
hash. The hash is cargo's digest of what the unit is built from (the package's version and
source, its features, the profile, the compiler, the target, its dependencies' hashes), and
the fingerprint in that folder is what cargo compares before it calls the unit fresh. So a
copied unit is taken only where cargo would have built the very same unit, and rebuilt
otherwise: nothing here decides that a unit fits, cargo does. What is copied is a
registry's or a git source's package only (`source` in Cargo.lock): the workspace's own
crates are hashed by their path relative to the workspace, so HEAD's export names its crates'
units as the user's `target/` names the tree's (built from other sources), and a path
package is fresh by its files' times; those are never copied, nor any package with a
workspace crate's name.

A unit is taken whole or not at all, and only as its source folder holds it complete: cargo
writes a unit's fingerprint after its outputs (none of them is newer), and a unit whose
fingerprint or outputs change while they are copied (a cargo at work there) is left out.
The copy is made under the destination's own cargo lock (`debug/.cargo-lock`, the `flock`
cargo takes for a build there), waited for while another cargo holds it (a bounded wait);
the fingerprint comes last, under a temporary name renamed into place. Files are copied,
never linked: a cargo that rebuilds a unit rewrites some of its files in place."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import time
import tomllib
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

__all__ = ["RUSTC_INFO", "registry_packages", "seed", "seed_rustc_info"]

_LOOK_EVERY_S = 0.05
_HASHED = re.compile(r"-([0-9a-f]{16})(?:\.|$)")
_NOT_THE_HASH = ("invoked.timestamp",)


RUSTC_INFO = ".rustc_info.json"
"""cargo's cache of what it asked the compiler (`rustc -vV`, `--print` of the file names and
cfgs for each target), at a target folder's top. Without it, a run in a new target folder
asks again first: two rustc processes before the first compile, about a third of the CPU of
HEAD's check of scopeguard's own code from nothing (150 -> 95 ms, load 20). Its content is
keyed by the compiler (its path, its file's time, the rustup toolchain) and each question by
its arguments, all checked by cargo, which asks again whatever does not match: copying it
decides nothing."""


def seed_rustc_info(dest: Path, sources: Sequence[Path]) -> bool:
    """Blocking: target folder `dest` given the first `RUSTC_INFO` of target folders
    `sources` when it has none (written whole under a temporary name, then renamed); whether
    one was copied."""
    if (dest / RUSTC_INFO).exists():
        return False
    for source in sources:
        try:
            text = (source / RUSTC_INFO).read_bytes()
        except OSError:
            continue
        staged = dest / f".{RUSTC_INFO}.habitat-copy"
        try:
            dest.mkdir(parents=True, exist_ok=True)
            staged.write_bytes(text)
            staged.rename(dest / RUSTC_INFO)
        except OSError:
            with contextlib.suppress(OSError):
                staged.unlink()
            return False
        return True
    return False


def registry_packages(lock: Path, members: Collection[str]) -> frozenset[str]:
    """The names of the lock file's packages from a registry or a git source, less any
    name a workspace crate has too; empty without a readable lock file."""
    try:
        data = tomllib.loads(lock.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return frozenset()
    packages = data.get("package")
    if not isinstance(packages, list):
        return frozenset()
    names = {
        str(p["name"]) for p in packages if isinstance(p, dict) and "name" in p and p.get("source")
    }
    return frozenset(names - set(members))


def _state(folder: Path) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            info = path.stat()
            out[path.relative_to(folder).as_posix()] = (info.st_mtime_ns, info.st_size)
    return out


def _files(paths: Sequence[Path]) -> dict[Path, tuple[int, int]]:
    out: dict[Path, tuple[int, int]] = {}
    for path in paths:
        if path.is_dir():
            out.update({path / rel: state for rel, state in _state(path).items()})
        else:
            info = path.stat()
            out[path] = (info.st_mtime_ns, info.st_size)
    return out


@contextlib.contextmanager
def _cargo_lock(profile: Path, wait_s: float) -> Iterator[bool]:
    """cargo's own lock on a profile folder, waited for up to `wait_s`: True when held."""
    profile.mkdir(parents=True, exist_ok=True)
    fd = os.open(profile / ".cargo-lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        until = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= until:
                    yield False
                    return
                time.sleep(_LOOK_EVERY_S)
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _by_hash(deps: Path) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(deps):
            m = _HASHED.search(entry.name)
            if m is not None and entry.is_file(follow_symlinks=False):
                out.setdefault(m[1], []).append(Path(entry.path))
    return out


def _copy_unit(source: Path, dest: Path, unit: str, outputs: list[Path]) -> bool:
    """One unit from profile folder `source` into `dest` (see the module), or nothing."""
    fingerprint = source / ".fingerprint" / unit
    try:
        before = _state(fingerprint)
        stamps = [t for name, (t, _) in before.items() if _is_hash_file(name)]
        build = source / "build" / unit
        parts = [*outputs, *([build] if build.is_dir() else [])]
        written = _files(parts)
    except OSError:
        return False
    if not stamps or any(t > max(stamps) for t, _ in written.values()):
        return False  # no fingerprint yet, or outputs newer than it: a build at work
    staged = dest / ".fingerprint" / f".{unit}.habitat-copy"
    try:
        for path in outputs:
            shutil.copy2(path, dest / "deps" / path.name)
        if build.is_dir():
            shutil.copytree(build, dest / "build" / unit, symlinks=True, dirs_exist_ok=True)
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(fingerprint, staged)
        if _state(fingerprint) != before or _files(parts) != written:
            shutil.rmtree(staged, ignore_errors=True)
            return False
        staged.rename(dest / ".fingerprint" / unit)
    except OSError:
        shutil.rmtree(staged, ignore_errors=True)
        return False
    return True


def _is_hash_file(name: str) -> bool:
    return not (name.endswith(".json") or name.startswith("dep-") or name in _NOT_THE_HASH)


def seed(
    dest: Path,
    sources: Sequence[Path],
    packages: Collection[str],
    *,
    linked: bool = True,
    wait_s: float = 30.0,
) -> int:
    """Blocking: copy into profile folder `dest` (`<target>/debug`) every unit of
    `packages` a folder of `sources` holds whole and `dest` has not; how many were copied.
    `linked` False: not the libraries compiled for linking (an `.rlib` among the unit's
    files), which a check uses only to build a build script (its build-dependencies, then
    compiled there): it takes the libraries' metadata from check units of their own, and
    runs the build scripts and proc macros, which are copied. The rlibs are most of what a
    user's build folder holds. A cargo at work in `dest` is waited for
    (the run that follows would wait for it too), up to `wait_s`: then nothing is copied."""
    if not packages:
        return 0
    wanted = set(packages)
    copied = 0
    with _cargo_lock(dest, wait_s) as held:
        if not held:
            return 0
        (dest / "deps").mkdir(exist_ok=True)
        (dest / "build").mkdir(exist_ok=True)
        (dest / ".fingerprint").mkdir(exist_ok=True)
        have = {p.name for p in (dest / ".fingerprint").iterdir()}
        for source in sources:
            if source.resolve() == dest.resolve() or not (source / ".fingerprint").is_dir():
                continue
            outputs = _by_hash(source / "deps")
            for entry in sorted(os.scandir(source / ".fingerprint"), key=lambda e: e.name):
                name, _, digest = entry.name.rpartition("-")
                if name not in wanted or entry.name in have or len(digest) != 16:
                    continue
                files = outputs.get(digest, [])
                if not linked and any(f.suffix == ".rlib" for f in files):
                    continue
                if _copy_unit(source, dest, entry.name, files):
                    have.add(entry.name)
                    copied += 1
    return copied
