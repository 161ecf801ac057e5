# proc/: supervised processes shared by shell tabs and ladder rungs.
#   record      ProcessRecord (pid + create time + marker), is_alive
#   supervised  spawn into a new session with output to a spool file; wait; adopt
#   kill        kill_tree — the one place that owns killing; KillPolicy (grace, read per call)
#   signals     parse_signal
from .kill import DEFAULT_POLICY, KillPolicy, KillReport, kill_tree, marked_leader, members
from .record import ProcessRecord, is_alive, process_create_time
from .signals import parse_signal
from .supervised import MARKER_ENV, Supervised, spawn

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
