"""A cgroup (v2) per run, where the machine lets this process make one.

The `HABITAT_RUN_ID` marker is an environment variable, and `env -i` drops it: a daemon
that clears its environment and calls setsid leaves every trace `kill_tree` follows. A
cgroup is the one membership a process cannot leave by itself, so where this process may
create cgroups under its own (root, or a delegated subtree), each run gets one, named by
its marker: its members are read from `cgroup.procs` and `cgroup.kill` ends them all at
once. Where it may not, `tracking()` says so and the callers report what they could not see.

Layout: `<our cgroup>/agent-habitat/h<pid>-<start>-n<pid namespace>/<marker>`: each habitat
process makes its run groups in a folder of its own, named by its pid, start time and pid
namespace. A run's group is removed once it is empty; `sweep` touches only the folders of
habitat processes that are gone, so it never removes a group another live habitat has just
made or still reads. A pid is a pid in its own namespace: containers that share the cgroup
tree but not the pids see each other's owners as gone (`h42-…` is some other process here,
or none), so a folder of another namespace is never swept: a habitat in one killed the
rungs of a live one in another, mid-run, as `died` or exit -9 (issue 27's Rust bench, with
engineers' sandboxes side by side). A folder named without one (an older habitat's) is
judged as before.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..lazy import lazy_module

if TYPE_CHECKING:
    import psutil
else:
    psutil = lazy_module("psutil")  # proc/ calls it in a few places: loaded when one runs


__all__ = [
    "CGROUP_ENV",
    "Tracking",
    "born_inside",
    "emptied",
    "group_kill",
    "group_pids",
    "place",
    "prepare",
    "remove",
    "reset",
    "sweep",
    "tracking",
    "untracked_note",
]

CGROUP_ENV = "HABITAT_CGROUP"
"""The run's cgroup folder, for the wrapper shell to move itself into before anything else."""
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")
# None: not probed yet; False: no cgroup we may write; a Path: the parent of the run groups.
_root: Path | bool | None = None

Tracking = Literal["cgroup", "marker"]
"""`cgroup` (every process of a run is seen) or `marker` (one that clears its environment
and leaves the run's session is not)."""

_UNSEEN = "a process that cleared its environment (env -i) and left the run's session"


def untracked_note() -> str:
    """What a run without a cgroup could not be searched for, and why it has none."""
    if tracking() == "cgroup":
        return f"this run has no cgroup (it started without one): {_UNSEEN} could not be seen"
    return f"no cgroup per run here (cgroup v2 not writable): {_UNSEEN} could not be seen"


def _mount_point() -> Path | None:
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as mounts:
            for line in mounts:
                fields = line.split()
                sep = fields.index("-")
                if fields[sep + 1] == "cgroup2":
                    return Path(fields[4])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _own_group() -> str | None:
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as groups:
            for line in groups:
                if line.startswith("0::"):
                    return line[3:].strip()
    except OSError:
        return None
    return None


def _probe() -> Path | bool:
    # HABITAT_RUN_CGROUPS=0 turns them off (a machine whose cgroups misbehave; the tests of
    # what is reported without them).
    if os.environ.get("HABITAT_RUN_CGROUPS", "") == "0":
        return False
    mount, own = _mount_point(), _own_group()
    if mount is None or own is None:
        return False
    root = mount / own.lstrip("/") / "agent-habitat"
    try:
        root.mkdir(exist_ok=True)
        probe = root / _owner_name() / "probe"
        probe.mkdir(parents=True, exist_ok=True)
        ok = (probe / "cgroup.procs").exists()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return root if ok else False


def _groups_root() -> Path | None:
    global _root
    if _root is None:
        _root = _probe()
    return _root if isinstance(_root, Path) else None


def reset() -> None:
    """Probe again at the next use (tests switch run cgroups off and on)."""
    global _root
    _root = None


def tracking() -> Tracking:
    return "cgroup" if _groups_root() is not None else "marker"


# Groups of processes that must not outlive this one (a verify rung): their names carry
# the owner (`<marker>.owner-<pid>-<start>`), so the next habitat process can tell a dead
# owner's from a live one's and kill what it left (`sweep`).
_owned: dict[str, Path] = {}
# Groups whose leader was in them before it ran anything (`place(first=True)`, in this
# process): every process of such a run was born in its group.
_born_inside: set[str] = set()
_OWNER = re.compile(r"\.owner-(\d+)-(\d+)$")
# The folder of one habitat process's run groups (`h<pid>-<start>-n<pid namespace>`).
_HOLDER = re.compile(r"^h(\d+)-(\d+)(?:-n(\d+))?$")
_names: dict[int, str] = {}


def _owner_name() -> str:
    """This process's folder name, `h<pid>-<start>-n<pid namespace>` (again after a fork:
    another pid)."""
    pid = os.getpid()
    if pid not in _names:
        space = pid_namespace()
        tag = f"-n{space}" if space else ""
        _names[pid] = f"h{pid}-{_started(pid)}{tag}"
    return _names[pid]


def pid_namespace() -> str:
    """This process's pid namespace (the inode `/proc/self/ns/pid` names), '' where the
    system does not say (no /proc, or not Linux)."""
    try:
        link = os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
    found = re.search(r"\[(\d+)\]", link)
    return found[1] if found else ""


def _judged_here(holder: re.Match[str]) -> bool:
    """A holder folder whose owner's pid means the same process here: one named in this
    pid namespace, or one named without (an older habitat's, judged as before)."""
    return holder[3] is None or holder[3] == pid_namespace()


def _own(marker: str) -> Path | None:
    """Where this process makes the run's group."""
    root = _groups_root()
    return root / _owner_name() / _SAFE.sub("_", marker) if root is not None else None


def _group(marker: str) -> Path | None:
    """The run's group: this process's, else the one an earlier habitat process made (a run
    it adopts), else where this process would make it."""
    if marker in _owned:
        return _owned[marker]
    own = _own(marker)
    if own is None or own.is_dir():
        return own
    name, root = own.name, own.parent.parent
    with contextlib.suppress(OSError):
        for holder in root.iterdir():
            if _HOLDER.match(holder.name) and (holder / name).is_dir():
                return holder / name
    legacy = root / name  # made by a habitat of before the per-process folders
    return legacy if legacy.is_dir() else own


def _started(pid: int) -> int:
    """`int(psutil.Process(pid).create_time())`, computed as psutil computes it on Linux
    (cgroups are Linux's): the stat line's start in clock ticks over the clock rate, plus
    the boot time of `/proc/stat`, the same float operations in the same order, so a name
    an earlier habitat's psutil wrote, or reads, is the same; psutil (loaded then) where
    either file cannot be read; ProcessLookupError when /proc is there and the process is
    not. Loading psutil was a thirtieth of `habitat run`."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            line = f.read()
        # Field 22 (starttime), counted after the command name's closing parenthesis.
        ticks = float(line[line.rindex(b")") + 2 :].split()[19])
        with open("/proc/stat", "rb") as f:
            boot = next(float(row.split()[1]) for row in f if row.startswith(b"btime"))
        return int(ticks / os.sysconf("SC_CLK_TCK") + boot)
    except FileNotFoundError:
        if os.path.exists("/proc/self/stat"):
            raise ProcessLookupError(pid) from None  # /proc answers: no such process
        return int(psutil.Process(pid).create_time())
    except (OSError, ValueError, IndexError, StopIteration):
        return int(psutil.Process(pid).create_time())


def _owner_tag() -> str:
    return f".owner-{os.getpid()}-{_started(os.getpid())}"


def _owner_alive(pid: int, created: int) -> bool:
    try:
        return _started(pid) == created
    except ProcessLookupError:
        return False  # gone (an earlier CLI call's, most often): psutil is not loaded
    except psutil.Error:
        return False


def prepare(marker: str, *, owned: bool = False) -> Path | None:
    """Make the run's cgroup before its process starts; its folder, or None without one.

    The process is placed in it twice: by the spawner right after the fork (`place`), and
    by the wrapper shell itself as its first builtin (it finds the folder in `CGROUP_ENV`),
    because a small shell forks before the spawner's write lands: a daemon started in that
    window would be born outside the group. `owned`: its processes die with this one (the
    next habitat process's `sweep` kills them if this one is killed first).
    """
    group = _own(marker)
    if group is None:
        return None
    if owned:
        group = group.with_name(group.name + _owner_tag())
        _owned[marker] = group
    try:
        group.mkdir(parents=True, exist_ok=True)
    except OSError:
        _owned.pop(marker, None)
        return None
    return group


def place(marker: str, pid: int, *, first: bool = False, joins_itself: bool = False) -> bool:
    """Move `pid` (just spawned) into the run's cgroup.

    Whether the whole run is then known to be born in the group (`born_inside`): with
    `first`, the caller knows `pid` has run nothing yet and starts nothing before this
    returns (a prestarted wrapper waits for its command). With `joins_itself`, `pid` moves
    itself in before it can fork (the POSIX wrapper shells' first builtin): that move, or
    this one if it lands first, put it there in time, unless the group was gone meanwhile
    (a habitat of before the per-process folders swept every empty group), which this sees
    as a group it had to make again."""
    group = _group(marker) if marker in _owned else _own(marker)
    if group is None:
        return False
    # Twice: such a sweep may remove the empty group between mkdir and write.
    kept = True
    for _ in range(2):
        try:
            group.mkdir(parents=True)
            kept = False
        except FileExistsError:
            pass
        except OSError:
            continue
        try:
            (group / "cgroup.procs").write_text(f"{pid}\n", encoding="ascii")
        except OSError:
            kept = False
            continue
        if first or (joins_itself and kept):
            _born_inside.add(marker)
        return True
    return False


def born_inside(marker: str) -> bool:
    """Whether every process of the run was born in its group (see `place`), as far as this
    process knows: then its members are exactly its group's processes."""
    return marker in _born_inside


def emptied(marker: str) -> bool:
    """Whether nothing of the run lives any more, known from one read of its group's
    `cgroup.events` (`populated 0`) instead of a scan. Only for a group its leader was
    placed in before it ran anything (`place(first=True)`, in this process): a leader
    placed after its start may have forked a child outside first, which only the scan
    (by session and marker) finds. False when it cannot tell.

    What it cannot see, like `cgroup.kill`: a process that moved itself into a cgroup
    outside the run's (it needs write access to that group, as `systemd-run --scope` has)."""
    if not born_inside(marker):
        return False
    # Born inside: the group is this process's (`place`), no search for another's.
    group = _owned.get(marker) or _own(marker)
    if group is None:
        return False
    # One open and one read (`read_text` adds a stat, an ioctl and seeks): on the way to
    # every quick run's answer.
    try:
        fd = os.open(group / "cgroup.events", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        events = os.read(fd, 4096)
    except OSError:
        return False
    finally:
        os.close(fd)
    return b"populated 0" in events.splitlines()


def group_pids(marker: str) -> list[int] | None:
    """Every pid in the run's cgroup and its sub-groups; None when the run has no cgroup."""
    group = _group(marker)
    if group is None or not group.is_dir():
        return None
    pids: list[int] = []
    for folder, _dirs, files in os.walk(group):
        if "cgroup.procs" not in files:
            continue
        with contextlib.suppress(OSError):
            text = Path(folder, "cgroup.procs").read_text(encoding="ascii")
            pids.extend(int(p) for p in text.split())
    return pids


def group_kill(marker: str) -> bool:
    """SIGKILL every process of the run's cgroup at once (`cgroup.kill`, Linux ≥ 5.14)."""
    group = _group(marker)
    if group is None:
        return False
    try:
        (group / "cgroup.kill").write_text("1", encoding="ascii")
    except OSError:
        return False
    return True


def remove(marker: str) -> None:
    """Remove the run's cgroup if it is empty (a non-empty one stays: EBUSY)."""
    group = _group(marker)
    if group is not None:
        with contextlib.suppress(OSError):
            group.rmdir()
            _owned.pop(marker, None)
            _born_inside.discard(marker)


def sweep() -> None:
    """Clear what habitat processes that are gone left: kill what their owned groups still
    hold (a rung whose host died), remove their empty groups (runs that ended alone) and
    their folders once empty. A live habitat process's folder is its own business: its runs
    may be starting (a group made, its process not in it yet) or read (`emptied`)."""
    root = _groups_root()
    if root is None:
        return
    with contextlib.suppress(OSError):
        for holder in root.iterdir():
            found = _HOLDER.match(holder.name)
            if found is not None and not _judged_here(found):
                continue  # another pid namespace's habitat: its pids are not ours to judge
            if found is not None and not _owner_alive(int(found[1]), int(found[2])):
                _clear(holder)
                with contextlib.suppress(OSError):
                    holder.rmdir()
            elif found is None and holder.is_dir():
                # A group of before the per-process folders: only a dead owner's rung goes;
                # an empty one may be a run an older habitat is starting.
                owner = _OWNER.search(holder.name)
                if owner is not None and not _owner_alive(int(owner[1]), int(owner[2])):
                    _clear_one(holder)


def _clear(holder: Path) -> None:
    """A dead habitat process's folder: its rungs killed, its empty groups removed."""
    with contextlib.suppress(OSError):  # another habitat may be clearing it too
        for child in holder.iterdir():
            if not child.is_dir():
                continue
            if _OWNER.search(child.name) is not None:
                _clear_one(child)
            else:
                with contextlib.suppress(OSError):
                    child.rmdir()  # a populated group (a run that outlives its habitat) stays


def _clear_one(group: Path) -> None:
    with contextlib.suppress(OSError):
        (group / "cgroup.kill").write_text("1", encoding="ascii")
    with contextlib.suppress(OSError):
        group.rmdir()
