# shell/: tabs on the system shell, built on proc/.
#   models      request/result models of the verbs (the contract)
#   service     Shell: run, rerun, kill, close, input (+ the read-only verbs of views)
#   stdin_input the input verb: text to a running interactive command's stdin
#   tabs        Tabs — the tabs, their runs and where a command starts (views and scene take it)
#   spool_keeping SpoolKeeping — which runs get a spool keeper, and when it starts
#   prestarts   Prestarts — each tab's next wrappers, started once its last run answered
#   run_folders run folders removed so no late writer keeps one (renamed `gone-…` first)
#   lull        Lull — what a run's end leaves to do waits until no run is being answered
#   follow      Follower — a run from its start to its answer (a quick one needs no keeper)
#   supervisor  RunSupervisor — how runs end: adoption, watching, killing, recording the end
#   end_record  EndRecorder — a run's end written (row, tab, event); a quick one's after its answer
#   orphans     Orphans — a run whose wrapper died while processes of its own run on
#   waiting     a foreground run's limit and progress; the wait verb (match, exit, timeout)
#   views       run results, history, last, which, wait (over Tabs)
#   scene       the scene of every tab (SceneBuilder), built once for callers who overlap
#   leftovers   what ended runs left running;  error_lines  a failed run's error lines
#   quiet_scene the scene read from state.db alone while nothing runs (`habitat scene`)
#   quiet_reads history, last, which, wait and kill read the same way, as their models dump them
#   quiet_run   a foreground run with no host, recorded without pydantic or anyio when it is
#               over in its first moment; else handed to Shell.follow_handed
#   quiet_close a tab closed the same way when nothing of it runs or was left running
#   journal_row an event in the journal as the bus writes it, for those (and `habitat trust`)
#   settled     whether the state needs anything done before such a read (no pathlib)
#   run_store   RunStore — tabs and runs in state.db (the SQL, but quiet_scene's two reads)
#   shells      shell discovery;  wrapper  the per-command wrapper that records exit/cwd/env
#   environment a command's starting env;  output  spool → capped, ANSI-free text
#   omitted     the omitted-output marker: written and parsed only there
#   long_runs   a run still going after 0.5 s yields the CPU to the host and its callers
# Names load from their module on first use (PEP 562): `habitat scene` reads the state with
# `quiet_scene` alone, without building the verbs' models.
from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

if TYPE_CHECKING:
    from .service import Shell
    from .waiting import Progress

__getattr__ = lazy_attributes(__name__, {"Shell": "service", "Progress": "waiting"})

__all__ = ["Progress", "Shell"]
