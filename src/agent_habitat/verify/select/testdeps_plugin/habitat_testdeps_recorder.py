"""The recorder of the `habitat_testdeps` plugin: which of the project's functions start in
which window (a test, a fixture's setup, a collector), through `sys.monitoring` or
`sys.setprofile`, and the JSON file it writes at the end.

A module of its own beside the plugin (the folder on PYTHONPATH holds both): the plugin
(habitat_testdeps.py) owns the pytest hooks, the process-wide state and when recording starts;
this module knows nothing of pytest. Like the plugin it runs in the project's interpreter and
imports only the standard library. Its name carries the plugin's prefix so that it cannot
shadow a module of the project it is loaded into.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from types import CodeType, FrameType
from typing import Any

_MONITORING: Any = getattr(sys, "monitoring", None)
_getframe = sys._getframe  # kept: a test may monkeypatch `sys` itself
_MAX_WALK = 200
_HOT = 8
"""An armed function switched off at its 8th start since the last window boundary."""

Key = tuple[str, int]


class _Window:
    __slots__ = ("base", "codes", "key", "outer_seen", "spawned", "unlocked")

    def __init__(self, key: str, base: FrameType | None, outer_seen: set[CodeType]) -> None:
        self.key = key
        self.base = base
        self.codes: set[Key] = set()
        self.outer_seen = outer_seen
        self.spawned = False
        self.unlocked = False
        """A module body began in it while no import held a module lock (`_body_began`)."""


class Recorder:
    def __init__(self, root: str, packages: list[str], out_dir: str) -> None:
        self.root = os.path.realpath(root)
        # A package is a folder; a single-module project's module (`six.py`) is a file.
        given = [os.path.realpath(p) for p in packages if p]
        self.files = {p for p in given if p.endswith(".py")}
        self.packages = [p + os.sep for p in given if p not in self.files]
        self.out_dir = out_dir
        self._rel: dict[str, tuple[str, bool] | None] = {}
        self.stack: list[_Window] = []
        self.imports: set[Key] = set()
        self.modules: dict[str, set[Key]] = {}
        self.tests: dict[str, dict[str, Any]] = {}
        self.fixtures: dict[str, set[Key]] = {}
        self.hashes: dict[str, str] = {}
        self.tool: int | None = None
        self.armed_tool: int | None = None
        """The tool armed per function (None: the one global tool fires on every call)."""
        self.armed: set[CodeType] = set()
        self.fired: list[CodeType] = []
        """Armed functions switched off since the last re-arm."""
        self.calls: dict[CodeType, int] = {}
        """Starts of the armed functions already seen, since the last re-arm."""
        self.seen: set[CodeType] = set()
        self.broken: str | None = None
        self.spawning: set[str] = set()
        """Fixtures (not function-scoped) that started a process."""

    # -- where a file belongs -------------------------------------------------------------
    def where(self, filename: str) -> tuple[str, bool] | None:
        """(project-relative path, is a package file), or None outside the project."""
        try:
            return self._rel[filename]
        except KeyError:
            pass
        real = os.path.realpath(filename) if os.path.isabs(filename) else ""
        hit: tuple[str, bool] | None = None
        if (
            real
            and real.startswith(self.root + os.sep)
            and os.sep + "site-packages" + os.sep not in real
        ):
            rel = os.path.relpath(real, self.root).replace(os.sep, "/")
            own = real in self.files or any(real.startswith(p) for p in self.packages)
            hit = (rel, own)
            self._hash(rel, real)
        self._rel[filename] = hit
        return hit

    def _hash(self, rel: str, real: str) -> None:
        if rel not in self.hashes:
            try:
                with open(real, "rb") as f:
                    self.hashes[rel] = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                self.hashes[rel] = "-"

    # -- one code object started ----------------------------------------------------------
    def note(self, code: CodeType, frame: FrameType | None, depth: int = 0) -> None:
        """`code` started in `frame`; None: in the frame `depth` levels above the caller,
        taken only when a module body may be running (`_may_import`)."""
        hit = self.where(code.co_filename)
        if hit is None or not hit[1] or code.co_name == "<module>":
            return
        key = (hit[0], code.co_firstlineno)
        window = self.stack[-1] if self.stack else None
        if window is None:
            self.imports.add(key)
            return
        if not self._may_import(window):
            window.codes.add(key)  # no module body runs: `_module_owner` would find none
            return
        if frame is None:
            frame = _getframe(depth + 1)
        target = self._module_owner(frame, window.base)
        if target == "":
            self.imports.add(key)
        elif target is not None:
            self.modules.setdefault(target, set()).add(key)
        else:
            window.codes.add(key)

    @staticmethod
    def _may_import(window: _Window) -> bool:
        """Whether a module body may be running as an import now: an import holds its
        module's lock while the body runs (importlib's `_module_locks` is empty otherwise,
        in every thread), and a body run without one (`exec_module` by hand, as pytest's
        `--import-mode=importlib` does) marked the window as it began. Only then is the
        stack walked (`_module_owner`): a walk reads `f_code` at each frame, an audit event
        each, and it was most of the recorder's cost (rfc3986: ~200,000 notes of ~30
        frames)."""
        return _LOCKS is None or bool(_LOCKS) or window.unlocked

    def _body_began(self) -> None:
        """A module body started: with no import's lock held, the windows it runs in walk
        the stack from now on (`_may_import`)."""
        if _LOCKS is not None and not _LOCKS:
            for window in self.stack:
                window.unlocked = True

    def _module_owner(self, frame: FrameType | None, base: FrameType | None) -> str | None:
        """The innermost module body running above `frame` (up to the window's base):
        None when there is none, "" for a package module or a file outside the project,
        else the test-side file's relative path. Only an import's module body counts:
        code a test runs with `exec` or `runpy` in a namespace of its own (python-slugify
        execs its README's examples) runs again at every call, so it is the test's; as
        import-time code it made every function it called select the whole suite."""
        f = frame.f_back if frame is not None else None
        for _ in range(_MAX_WALK):
            if f is None or f is base:
                return None
            if f.f_code.co_name == "<module>" and _importing(f):
                hit = self.where(f.f_code.co_filename)
                return "" if hit is None or hit[1] else hit[0]
            f = f.f_back
        return ""  # too deep to tell: count it as import-time, the safe side

    # -- windows --------------------------------------------------------------------------
    def push(self, key: str, base: FrameType | None) -> _Window:
        window = _Window(key, base, self.seen)
        self.stack.append(window)
        self.seen = set()  # each window notes every function it runs, once
        self._rearm()
        return window

    def pop(self, window: _Window) -> set[Key]:
        if self.stack and self.stack[-1] is window:
            self.stack.pop()
        self.seen = window.outer_seen
        self._rearm()  # what the outer window had not seen notes itself there again
        if self.stack:
            self.stack[-1].codes |= window.codes
        return window.codes

    def _rearm(self) -> None:
        """The functions switched off since the last window boundary fire again (`seen` only
        grows between two boundaries: one that fired after joining it would note nothing)."""
        self.calls = {}
        if self.armed_tool is None or not self.fired:
            return
        events = _MONITORING.events.PY_START | _MONITORING.events.PY_RESUME
        for code in self.fired:
            _MONITORING.set_local_events(self.armed_tool, code, 0)
            _MONITORING.set_local_events(self.armed_tool, code, events)
        self.fired = []

    # -- backends -------------------------------------------------------------------------
    def start(self) -> None:
        if _MONITORING is not None:
            free = [tool for tool in (4, 3) if _MONITORING.get_tool(tool) is None]
            for tool in free:
                _MONITORING.use_tool_id(tool, "habitat-testdeps")
            self.tool = free[0] if free else None
            self.armed_tool = free[1] if len(free) > 1 else None
        if self.tool is not None:
            events = _MONITORING.events
            disable = _MONITORING.DISABLE
            on_start = self._on_start(disable)
            if self.armed_tool is not None:
                on_armed = self._on_armed(disable)
                for event in (events.PY_START, events.PY_RESUME):
                    _MONITORING.register_callback(self.armed_tool, event, on_armed)
                on_start = self._on_first(disable, on_armed)
            for event in (events.PY_START, events.PY_RESUME):
                _MONITORING.register_callback(self.tool, event, on_start)
            _MONITORING.set_events(self.tool, events.PY_START | events.PY_RESUME)
        else:
            threading.setprofile(self._profile)
            sys.setprofile(self._profile)

    def _on_start(self, disable: object) -> Any:
        rel = self._rel

        def callback(code: CodeType, offset: int) -> object:
            if code.co_name == "<module>":
                self._body_began()
            # Code outside the packages is switched off for good (no restart_events ever):
            # from then on only the project's own functions cost a callback.
            hit = rel.get(code.co_filename, False)
            if hit is None or (isinstance(hit, tuple) and not hit[1]):
                return disable
            if code in self.seen:
                return None
            self.seen.add(code)
            try:
                self.note(code, None, 1)
            except Exception as exc:  # never break the user's test run
                self.broken = repr(exc)
            return None

        return callback

    def _on_first(self, disable: object, on_armed: Any) -> Any:
        """The global tool's callback beside an armed tool: a function's first start ever
        (or after someone's `restart_events`); a package function is armed from then on."""
        events = _MONITORING.events.PY_START | _MONITORING.events.PY_RESUME
        armed_tool = self.armed_tool

        def callback(code: CodeType, offset: int) -> object:
            if code.co_name == "<module>":
                self._body_began()  # a module's code object is new at each import: seen here
            try:
                hit = self.where(code.co_filename)  # a dict's answer after the first
            except Exception as exc:  # never break the user's test run
                self.broken = repr(exc)
                return disable
            if hit is None or not hit[1] or code.co_name == "<module>":
                return disable  # a module body runs once: note() never records one
            if code not in self.armed:
                self.armed.add(code)
                _MONITORING.set_local_events(armed_tool, code, events)
                on_armed(code, offset, 2)  # this start fired here, not on the armed tool
            return disable

        return callback

    def _on_armed(self, disable: object) -> Any:
        """The armed tool's callback: a package function's start; noted at its first since
        the last window boundary, switched off at its `_HOT`th until the next one."""

        def callback(code: CodeType, offset: int, depth: int = 1) -> object:
            if code in self.seen:
                # Switched off once it is hot: a re-arm costs more than a few callbacks
                # (rfc3986's 2,800 small tests call most functions once or twice).
                calls = self.calls
                n = calls.get(code, 0) + 1
                if n < _HOT:
                    calls[code] = n
                    return None
                self.fired.append(code)
                return disable
            self.seen.add(code)
            try:
                self.note(code, None, depth)
            except Exception as exc:  # never break the user's test run
                self.broken = repr(exc)
            return None

        return callback

    def _profile(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code.co_name == "<module>":
            self._body_began()
        if code in self.seen:
            return
        self.seen.add(code)
        try:
            self.note(code, frame)
        except Exception as exc:  # never break the user's test run
            self.broken = repr(exc)

    def stop(self) -> None:
        if self.armed_tool is not None:
            for code in self.armed:
                _MONITORING.set_local_events(self.armed_tool, code, 0)
            _MONITORING.free_tool_id(self.armed_tool)
            self.armed_tool = None
        if self.tool is not None:
            _MONITORING.set_events(self.tool, 0)
            _MONITORING.free_tool_id(self.tool)
            self.tool = None
        else:
            sys.setprofile(None)
            threading.setprofile(None)

    # -- output ---------------------------------------------------------------------------
    def dump(self, rootdir: str) -> None:
        def pairs(keys: set[Key]) -> list[list[object]]:
            return [[rel, line] for rel, line in sorted(keys)]

        payload = {
            "version": 1,
            "backend": "monitoring" if _MONITORING is not None else "setprofile",
            "python": sys.version.split()[0],
            "rootdir": os.path.realpath(rootdir),
            "broken": self.broken,
            "hashes": self.hashes,
            "imports": pairs(self.imports),
            "modules": {rel: pairs(keys) for rel, keys in sorted(self.modules.items())},
            "fixtures": {name: pairs(keys) for name, keys in sorted(self.fixtures.items())},
            "spawning": sorted(self.spawning),
            "tests": self.tests,
        }
        os.makedirs(self.out_dir, mode=0o700, exist_ok=True)  # made 0700 by the habitat
        path = os.path.join(self.out_dir, f"deps-{os.getpid()}.json")
        # json.dumps, not json.dump: only the one-shot encoder is the C one (json.dump
        # walks the payload in Python: 0.43 s against 0.07 s for rfc3986's 2,836 tests).
        text = json.dumps(payload, separators=(",", ":"))
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)


def _importing(frame: FrameType) -> bool:
    """Whether a module body's frame runs a module's import: its globals are those of a
    module in `sys.modules` (an import, a reload); `exec` of a snippet, `runpy`'s fresh
    namespaces and doctest's are not."""
    namespace = frame.f_globals
    module = sys.modules.get(namespace.get("__name__", ""))
    return module is not None and getattr(module, "__dict__", None) is namespace


_LOCKS: dict[str, object] | None = getattr(
    sys.modules.get("_frozen_importlib"), "_module_locks", None
)
"""importlib's locks of the modules being imported, by name: CPython's import holds one while
the module's body runs (`_bootstrap._ModuleLockManager`) and drops it when the import ends.
None where the interpreter has no such table: the stack is walked at every note."""
