# verify/: the verification ladder (DESIGN §5).
#   models       requests and results;   config  [tool.habitat.ladder] and the policy
#   ladder_names the rungs, the policies and warning words, without the models
#   output_dirs  the folders each toolchain's tools fill, by its marker file (no toolchain loaded)
#   snapshot     HEAD + dirty set → snapshot id;   layout  packages and tests of a project
#   select/      which tests a change needs: impact, selection, recorded test dependencies
#   parsers      tool output → diagnostics
#   environments the project's interpreter and tools;  command  one rung process via proc/
#   head         HEAD's files and export;   baseline  findings matched against HEAD's, cached
#   rungs/       one module per rung;   ladder  the climb (presentation lives in cli/)
#   given_files  `--files` as the project's paths, or the usage error that names them
#   ahead        later rungs' work started beside an earlier one, reported in order
#   stopping     the processes of the rungs a red ends, reaped after the verdict
#   warm_stop    the warm dmypy daemon and warm pytest stopped, without the ladder
#   climb_imports the climb's modules imported ahead of a host's first verify
#   rung_events  a rung's task events on the bus and the runner's hook
#   toolchains/  what a language brings (python first): detect, owns, its rungs, ignores
#   runner/      the background verify runner and its service face (queue, coalesce, cancel,
#                epochs, staleness, watch, substrate, accounting, warm-up, the slot a host holds)
#   hooks        how the runner takes part in a climb
#   deps_store   the store of per-test dependency data (select/ reads it; runner/'s
#                recorder fills it in the background)
#   blocks, line_map   a file as blocks, a HEAD line's place now (findings through an edit)
#   comment_lines      an edit that is only whole-line comments, told from its lines
#   tracebacks   pytest's tracebacks read for the verdict;  generated  generated sources
#   pytest_zygote/  the warm pytest and its client: scripts the project's interpreter runs
#   early_pytest a one-shot verify's warm pytest begun before the ladder is imported
#   timing       where the wall a person waited went, parts that add up to it
#   field_docs   the report's models, described by their attribute docstrings, built on use
#   python_ast   Python source into ast objects, one build at a time in the process
# Names load from their module on first use (PEP 562): a caller that needs only the models
# (the verb table, a shell command) does not pay for the ladder, the runner or grimp.
from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

_HOME = {
    "Diagnostic": "models",
    "EpochState": "runner.epochs",
    "GitError": "snapshot",
    "LadderConfig": "config",
    "LadderRequest": "models",
    "LadderResult": "models",
    "LadderState": "models",
    "POLICIES": "models",
    "Policy": "models",
    "ProgressSink": "runner.models",
    "RUNGS": "models",
    "RungName": "models",
    "RungResult": "models",
    "RungState": "models",
    "RungStatus": "runner.epochs",
    "RunnerConfig": "runner.config",
    "Selection": "models",
    "Snapshot": "snapshot",
    "SubstrateConfig": "runner.config",
    "TimeAccount": "runner.accounting",
    "TimeAccounting": "runner.accounting",
    "TimeReport": "runner.accounting",
    "VerifyEpoch": "runner.epochs",
    "VerifyRunner": "runner.runner",
    "VerifyStatus": "runner.models",
    "VerifyTicket": "runner.models",
    "import_climb": "climb_imports",
    "load_ladder_config": "config",
    "load_policy": "config",
    "load_runner_config": "runner.config",
    "run_ladder": "ladder",
    "stop_type_daemon": "warm_stop",
    "take_snapshot": "snapshot",
}

if TYPE_CHECKING:
    from .climb_imports import import_climb
    from .config import LadderConfig, load_ladder_config, load_policy
    from .ladder import run_ladder
    from .models import (
        POLICIES,
        RUNGS,
        Diagnostic,
        LadderRequest,
        LadderResult,
        LadderState,
        Policy,
        RungName,
        RungResult,
        RungState,
        Selection,
    )
    from .runner.accounting import TimeAccount, TimeAccounting, TimeReport
    from .runner.config import RunnerConfig, SubstrateConfig, load_runner_config
    from .runner.epochs import EpochState, RungStatus, VerifyEpoch
    from .runner.models import ProgressSink, VerifyStatus, VerifyTicket
    from .runner.runner import VerifyRunner
    from .snapshot import GitError, Snapshot, take_snapshot
    from .warm_stop import stop_type_daemon


__getattr__ = lazy_attributes(__name__, _HOME)


__all__ = [
    "POLICIES",
    "RUNGS",
    "Diagnostic",
    "EpochState",
    "GitError",
    "LadderConfig",
    "LadderRequest",
    "LadderResult",
    "LadderState",
    "Policy",
    "ProgressSink",
    "RungName",
    "RungResult",
    "RungState",
    "RungStatus",
    "RunnerConfig",
    "Selection",
    "Snapshot",
    "SubstrateConfig",
    "TimeAccount",
    "TimeAccounting",
    "TimeReport",
    "VerifyEpoch",
    "VerifyRunner",
    "VerifyStatus",
    "VerifyTicket",
    "import_climb",
    "load_ladder_config",
    "load_policy",
    "load_runner_config",
    "run_ladder",
    "stop_type_daemon",
    "take_snapshot",
]
