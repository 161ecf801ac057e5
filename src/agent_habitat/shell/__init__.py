# shell/: tabs on the system shell, built on proc/.
#   models      request/result models of the verbs (the contract)
#   habitat     ShellHabitat: run, rerun, kill, close, input (+ the read-only verbs of views)
#   supervisor  RunSupervisor — how runs end: adoption, watching, killing, recording the end
#   waiting     a foreground run's limit and progress; the wait verb (match, exit, timeout)
#   views       scene, history, last, which, wait results
#   run_store   RunStore — tabs and runs in state.db (all the SQL)
#   shells      shell discovery;  wrapper  the per-command wrapper that records exit/cwd/env
#   environment a command's starting env;  output  spool → capped, ANSI-free text
from .habitat import ShellHabitat
from .waiting import Progress

__all__ = ["Progress", "ShellHabitat"]
