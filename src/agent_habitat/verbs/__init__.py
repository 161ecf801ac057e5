# verbs/: every verb, once — the table the MCP tools, the CLI subcommands and the host's
# JSON API are derived from. A new verb is one row here plus its service function.
#   row      the Verb row (name, models, service call, annotations, texts), describe()
#   shell    the ten shell verbs;  project  project_open, project_scene;  files  file_write/edit
#   verify   verify_run, verify_status, verify_cancel (listed while a project is open)
# Core: adapters read this table, it never imports them.
from .files import FILE_VERBS
from .project import PROJECT_VERBS
from .row import Call, Group, Progress, Verb, describe
from .shell import SHELL_VERBS, SceneArgs
from .verify import VERIFY_VERBS

__all__ = ["VERBS", "Call", "Group", "Progress", "SceneArgs", "Verb", "describe", "verb"]

VERBS: tuple[Verb, ...] = (*SHELL_VERBS, *PROJECT_VERBS, *FILE_VERBS, *VERIFY_VERBS)


def verb(name: str, group: Group = "shell") -> Verb:
    """The row named `name` in `group`; KeyError names what exists."""
    for row in VERBS:
        if (row.name, row.group) == (name, group):
            return row
    known = ", ".join(row.tool_name(row.group) for row in VERBS)
    raise KeyError(f"no verb {group}.{name}; known: {known}")
