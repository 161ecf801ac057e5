# proc/: supervised processes shared by shell tabs and ladder rungs.
#   record      ProcessRecord (pid + create time + marker), is_alive
#   supervised  spawn into a new session with output to a spool file; wait; adopt
#   kill        kill_tree — the one place that owns killing; KillPolicy (grace, read per call)
#   signals     parse_signal
#   spool       a run's output file, read in bounded pieces (standard library only)
#   spool_hole  the range of a spool written but not kept;  spool_writers  who writes one
#   spool_keeper the keeper that holds a spool within its budget;  keepers  starting them
#   spawner     the seam between a service and the OS's processes
#   cgroup      a cgroup v2 per run, where allowed;  priority  idle priority
#   flocks      whole-file locks that mark a live owner
# Names load from their module on first use (PEP 562): the CLI reads a spool (`proc.spool`)
# without importing psutil and anyio, which the rest needs.
from ..lazy import lazy_attributes

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported

if TYPE_CHECKING:
    from .kill import DEFAULT_POLICY, KillPolicy, KillReport, kill_tree, marked_leader, members
    from .record import ProcessRecord, is_alive, process_create_time
    from .signals import parse_signal
    from .supervised import MARKER_ENV, Supervised, spawn

__getattr__ = lazy_attributes(
    __name__,
    {
        **dict.fromkeys(
            ("DEFAULT_POLICY", "KillPolicy", "KillReport", "kill_tree", "marked_leader", "members"),
            "kill",
        ),
        **dict.fromkeys(("ProcessRecord", "is_alive", "process_create_time"), "record"),
        "parse_signal": "signals",
        **dict.fromkeys(("MARKER_ENV", "Supervised", "spawn"), "supervised"),
    },
)

__all__ = [
    "DEFAULT_POLICY",
    "MARKER_ENV",
    "KillPolicy",
    "KillReport",
    "ProcessRecord",
    "Supervised",
    "is_alive",
    "kill_tree",
    "marked_leader",
    "members",
    "parse_signal",
    "process_create_time",
    "spawn",
]
