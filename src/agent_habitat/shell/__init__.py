# shell/: tabs on the system shell, built on proc/.
#   models       request/result models of the verbs (the contract)
#   habitat      ShellHabitat: run, rerun, kill, close, input
#   supervision  how runs end: adoption, watching, killing, recording the end (once)
#   views        scene, history, last, which, wait
#   shells       shell discovery; wrapper  the per-command wrapper that records exit/cwd/env
#   output       spool → capped, ANSI-free text;  records  tabs and runs in state.db
from .habitat import ShellHabitat
from .runner import Progress

__all__ = ["Progress", "ShellHabitat"]
