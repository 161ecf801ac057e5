"""Written by agent-habitat: the warm pytest of the ladder's test rungs (the habitat's side
is verify/rungs/warm_pytest.py; the client, run in place of `python -m pytest`, is
habitat_pytest_client.py beside this file).

It runs in the project's interpreter, so it imports nothing from agent_habitat and nothing
outside the standard library besides pytest:

    python habitat_pytest_zygote.py ADDRESS ROOT IDLE_S OWNER_PID

It imports what every pytest run imports before it reads a single project file — `pytest`
and its own built-in plugins, nothing else — then waits on ADDRESS (an abstract Unix
socket). Each request forks a *waiter*, which forks the *test process*: that one takes the
client's stdin, stdout and stderr, working folder and whole environment, rebuilds
`sys.path` as `python -m pytest` would have built it there, and runs pytest's `__main__`
as `-m` does, to a normal interpreter exit. The waiter reports the test process's wait
status to the client and kills its process group if the client goes away; the test
process dies with the waiter (PR_SET_PDEATHSIG).

A request it cannot run faithfully it answers `fresh WHY` (the client then execs the fresh
command line): an interpreter variable, locale or time zone that differs from its own, a
`sitecustomize` on the run's PYTHONPATH, or a folder of its own `sys.path` outside the
project (site-packages) changed since it started — then it exits, to be started anew.
It ends after IDLE_S without a request, and with OWNER_PID, the habitat process that
started it.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import importlib.util
import marshal
import os
import select
import signal
import socket
import struct
import sys
import time
from typing import TYPE_CHECKING, Any

_HEADER_SIZE = 4
# Read at interpreter start-up: a run that differs in any of them needs a fresh interpreter.
_STARTUP_PREFIXES = ("PYTHON", "LD_", "LC_")
_STARTUP_NAMES = ("LANG", "LANGUAGE", "TZ", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")
_PR_SET_PDEATHSIG = 1
_SAFE_PATH = getattr(sys.flags, "safe_path", False)  # -P / PYTHONSAFEPATH, Python 3.11+
_OWNER_CHECK_S = 5.0

if TYPE_CHECKING:
    Job = tuple["_Zygote", dict[str, Any], list[int], int, int]


def _startup_env(env: dict[str, str]) -> dict[str, str]:
    return {
        k: v
        for k, v in env.items()
        if k != "PYTHONPATH" and (k.startswith(_STARTUP_PREFIXES) or k in _STARTUP_NAMES)
    }


def _die_with_parent(sig: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)


class _Zygote:
    def __init__(self, root: str) -> None:
        self.root = root
        self.env = _startup_env(dict(os.environ))
        self.watched: dict[str, int | None] = {}
        self.tail: list[str] = []

    def warm(self) -> None:
        """Import pytest as `python -m pytest` in the root would (the root first on the
        path), then the modules pytest imports for itself before it reads the project."""
        if _SAFE_PATH:
            self.tail = list(sys.path)
        else:  # sys.path[0] is this script's folder, where `-m` puts the working folder
            self.tail = sys.path[1:]
            sys.path[0] = self.root
        import pytest  # noqa: F401
        from _pytest.config import default_plugins, essential_plugins

        for name in (*essential_plugins, *default_plugins):
            importlib.import_module("_pytest." + name)
        importlib.import_module("_pytest.assertion.rewrite")
        self._import_plugins()
        prefixes = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix)})
        root = os.path.realpath(self.root) + os.sep
        for module in list(sys.modules.values()):
            path = os.path.realpath(getattr(module, "__file__", None) or "/")
            if path.startswith(root) and not path.startswith(prefixes):
                raise SystemExit(
                    f"pytest imports {module.__name__} from the project itself ({path}): "
                    "its test runs stay fresh"
                )
        # The project's own folders change all the time and nothing was imported from them.
        for entry in self.tail:
            if not (os.path.realpath(entry) + os.sep).startswith(root):
                self.watched[entry] = _mtime(entry)

    def _import_plugins(self) -> None:
        """The installed plugins' modules (entry points `pytest11`), which every run
        imports before it reads the project too — not one that lives in the project."""
        if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
            return
        from importlib.metadata import entry_points

        root = os.path.realpath(self.root) + os.sep
        for point in entry_points(group="pytest11"):
            try:
                spec = importlib.util.find_spec(point.module)
                origin = os.path.realpath(spec.origin) if spec and spec.origin else root
                if not origin.startswith(root):
                    importlib.import_module(point.module)
            except Exception:  # a broken plugin: the run imports it again and reports it
                continue

    def changed(self) -> str | None:
        """A folder of the interpreter's path that changed since the warm-up (a package
        installed or removed: a fresh interpreter would see another path)."""
        for entry, seen in self.watched.items():
            if _mtime(entry) != seen:
                return entry
        return None

    def refusal(self, env: dict[str, str]) -> str | None:
        differ = sorted(set(_startup_env(env).items()) ^ set(self.env.items()))
        if differ:
            return f"{differ[0][0]} differs from the warm pytest's; it is read at interpreter start"
        for entry in env.get("PYTHONPATH", "").split(os.pathsep):
            for name in ("sitecustomize.py", "usercustomize.py"):
                if entry and os.path.exists(os.path.join(entry, name)):
                    return f"{name} on PYTHONPATH ({entry}) runs at interpreter start"
        return None

    def sys_path(self, cwd: str, env: dict[str, str]) -> list[str]:
        front = [] if _SAFE_PATH else [cwd]
        extra = [
            os.path.abspath(os.path.join(cwd, p))
            for p in env.get("PYTHONPATH", "").split(os.pathsep)
            if p
        ]
        return list(dict.fromkeys([*front, *extra, *self.tail]))


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def serve(address: str, root: str, idle_s: float, owner: int) -> Job | None:
    """The serve loop; returns only in a test process, with what it must run."""
    _die_with_parent(signal.SIGTERM)
    if os.getppid() != owner:
        return None  # the owner was gone before the death signal was armed
    zygote = _Zygote(root)
    zygote.warm()
    # What the warm-up imported lives as long as any run: frozen out of the collector, a
    # run's collections do not walk it (nor write to, and so copy, each page of it).
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + address)
    listener.listen(16)
    print(f"warm pytest ready: pid {os.getpid()}", flush=True)
    last = time.monotonic()
    while True:
        readable, _, _ = select.select([listener], [], [], _OWNER_CHECK_S)
        _reap()
        if not readable:
            if time.monotonic() - last > idle_s or os.getppid() != owner:
                return None
            continue
        conn, _ = listener.accept()
        last = time.monotonic()
        if os.fork() == 0:
            listener.close()
            return _wait_for(zygote, conn)  # a waiter; returns only in its test process
        conn.close()


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _send(conn: socket.socket, word: str, value: object) -> None:
    conn.sendall(f"{word} {value}\n".encode())


def _wait_for(zygote: _Zygote, conn: socket.socket) -> Job:
    """The waiter: check the request, fork its test process, report how it ended."""
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        peer_pid, peer_uid, _ = struct.unpack("3i", creds)
        if peer_uid != os.getuid():
            os._exit(0)
        request, fds = _receive(conn)
        why = zygote.refusal(request["env"])
        stale = zygote.changed()
        if stale is not None:
            why = f"{stale} changed since the warm pytest started; it starts anew"
            os.kill(os.getppid(), signal.SIGTERM)
        if why is not None:
            _send(conn, "fresh", why)
            os._exit(0)
        waiter = os.getpid()
        child = os.fork()
        if child == 0:
            conn.close()
            return (zygote, request, fds, peer_pid, waiter)
        for fd in fds:
            os.close(fd)
        _send(conn, "pid", child)
        watch = os.pidfd_open(child)
        while True:
            ready, _, _ = select.select([conn.fileno(), watch], [], [])
            if watch in ready:
                _, status = os.waitpid(child, 0)
                _send(conn, "status", status)
                os._exit(0)
            if not conn.recv(1):  # the client is gone: so is its run
                try:
                    os.killpg(child, signal.SIGKILL)
                except OSError:
                    pass
                os.waitpid(child, 0)
                os._exit(0)
    except (OSError, ValueError, KeyError, EOFError, TypeError):
        os._exit(1)


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    head, fds, _, _ = socket.recv_fds(conn, _HEADER_SIZE, 3)
    if len(head) < _HEADER_SIZE:
        head += conn.recv(_HEADER_SIZE - len(head), socket.MSG_WAITALL)
    size = int.from_bytes(head, "big")
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise OSError("the client went away mid-request")
        body += chunk
    if len(fds) != 3:
        raise OSError("the request did not carry stdin, stdout and stderr")
    request = marshal.loads(body)
    if not isinstance(request, dict):
        raise ValueError("not a request")
    return request, fds


def _run(zygote: _Zygote, request: dict[str, Any], fds: list[int], peer: int, waiter: int) -> None:
    """In the test process: become the fresh `python -m pytest` the client would have run."""
    _die_with_parent(signal.SIGKILL)
    if os.getppid() != waiter:
        os._exit(1)  # the waiter died before the death signal was armed
    # A session of its own (and so a process group), as the habitat's fresh processes get
    # (`start_new_session`): the kernel's autogroups share the CPU between sessions, and in
    # the zygote's one a run beside another (HEAD's failed tests beside the tree's run)
    # took its CPU from it.
    os.setsid()
    _join_cgroup(request["env"], peer)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        if fd > 2:
            os.close(fd)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    cwd, env = request["cwd"], request["env"]
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.path[:] = zygote.sys_path(cwd, env)
    if "tempfile" in sys.modules:  # pytest imported it: its cached folder goes, TMPDIR is the run's
        import tempfile

        tempfile.tempdir = None
    sys.argv = ["-m", *request["args"]]
    sys.orig_argv = [sys.executable, "-m", "pytest", *request["args"]]
    import runpy

    runpy.run_module("pytest", run_name="__main__", alter_sys=True)


def _join_cgroup(env: dict[str, str], pid: int) -> None:
    """Into the run's cgroup, where the habitat finds (and kills) every process of the
    run: the folder the spawner gave the run (`HABITAT_CGROUP`), else the client's own.
    Best effort: without one, the waiter and the death signal still bind it."""
    try:
        group = env.get("HABITAT_CGROUP")
        if not group:
            with open(f"/proc/{pid}/cgroup", encoding="utf-8") as groups:
                path = next(line.split(":", 2)[2].strip() for line in groups if line[:3] == "0::")
            group = _cgroup_mount() + path
        with open(os.path.join(group, "cgroup.procs"), "w", encoding="ascii") as procs:
            procs.write(str(os.getpid()))
    except (OSError, StopIteration, ValueError, IndexError):
        return


def _cgroup_mount() -> str:
    with open("/proc/self/mountinfo", encoding="utf-8") as mounts:
        for line in mounts:
            fields = line.split()
            if fields[fields.index("-") + 1] == "cgroup2":
                return fields[4]
    raise ValueError("no cgroup2 mount")


def main() -> None:
    if sys.version_info < (3, 9) or not hasattr(os, "pidfd_open"):
        raise SystemExit(
            f"a warm pytest needs Python 3.9+ on Linux 5.3+ (os.pidfd_open); this is "
            f"Python {sys.version.split()[0]}: its test runs stay fresh"
        )
    job = serve(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))
    if job is not None:
        _run(*job)


if __name__ == "__main__":
    main()
