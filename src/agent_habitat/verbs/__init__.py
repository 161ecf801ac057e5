# verbs/: every verb, once — the table the MCP tools, the CLI subcommands and the host's
# JSON API are derived from. A new verb is one row here plus its service function.
#   row      the Verb row, generic in its models (name, models, service call, annotations,
#            texts), AnyVerb, describe()
#            PREFIX (the shell verbs' prefix on the host's JSON API)
#   shell    the ten shell verbs;  project  project_open, project_scene;  files  file_write/edit
#   verify   verify_run, verify_status, verify_cancel (listed while a project is open)
#   table    VERBS (all of them) and verb(name, group)
# Core: adapters read this table, it never imports them. `VERBS` and `verb` load on first
# use (PEP 562): a CLI shell command needs the shell rows, not the ladder's models.
from ..lazy import lazy_attributes
from .row import PREFIX, AnyVerb, Call, Group, Progress, Verb, describe
from .shell import SHELL_VERBS, SceneArgs

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true
if TYPE_CHECKING:
    from .table import VERBS, verb

__getattr__ = lazy_attributes(__name__, {"VERBS": "table", "verb": "table"})

__all__ = [
    "PREFIX",
    "SHELL_VERBS",
    "VERBS",
    "AnyVerb",
    "Call",
    "Group",
    "Progress",
    "SceneArgs",
    "Verb",
    "describe",
    "verb",
]
